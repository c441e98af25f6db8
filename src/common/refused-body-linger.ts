import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and how many more bytes, a refused request's body is read and thrown away after its answer. */
export interface LingerBounds {
  ms: number;
  bytes: number;
}

/** The request each socket is serving now: whether its body is still coming decides how the socket closes. */
const current = new WeakMap<Socket, IncomingMessage>();
/** Sockets reading and discarding a refused body: their own bounds end them. */
const lingering = new WeakSet<Socket>();

/** Whether this socket is reading and discarding a refused body (its end is bounded here). */
export function isLingering(socket: Socket | null | undefined): boolean {
  return !!socket && lingering.has(socket);
}

/**
 * A refusal sent before the body was read (413, and the 401, 404, 408 and 429 of the onRequest
 * hooks) closes its connection (`Connection: close`). Node then closes the socket as soon as the
 * answer is written; the client, still sending, gets a TCP reset, and Node's `http` client (and
 * `fetch` under load) report `EPIPE`/`ECONNRESET` instead of the answer. So here the closing waits:
 * the answer is written, the rest of the body is read and thrown away, and only then does Node's
 * own close run, once the client has sent it all or closed its side, or after `bounds.ms`, or
 * once `bounds.bytes` more arrived, whichever comes first (a client sending without end holds
 * nothing for long). No FIN before that: a client socket that is not half-open (Node's `http`
 * client's) would end its own side on it and fail its next write with EPIPE. Clients that read
 * the `Connection: close` answer usually close first. A request whose body was read in full
 * closes at once, as before.
 */
export function installRefusedBodyLinger(server: Server, bounds: LingerBounds): void {
  server.on('request', (req: IncomingMessage) => {
    if (req.socket) current.set(req.socket, req);
  });
  server.on('connection', (socket: Socket) => {
    const destroySoon = socket.destroySoon.bind(socket);
    // Node's http server calls destroySoon once the last answer on a `Connection: close` socket is written.
    socket.destroySoon = () => {
      const req = current.get(socket);
      if (!req || req.complete || socket.destroyed || req.destroyed) return destroySoon();
      linger(socket, req, bounds, destroySoon);
    };
  });
}

function linger(socket: Socket, req: IncomingMessage, bounds: LingerBounds, close: () => void): void {
  lingering.add(socket);
  let received = 0;
  const done = () => {
    clearTimeout(timer);
    socket.removeListener('data', count);
    // Node's own close: FIN once the answer is flushed, then the socket goes.
    close();
  };
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > bounds.bytes) done();
  };
  const timer = setTimeout(done, bounds.ms).unref();
  socket.on('data', count);
  // The client closed its side, or the body arrived in full: nothing more to wait for.
  socket.once('end', done);
  socket.once('close', () => clearTimeout(timer));
  req.once('end', done);
  // Whatever stopped reading the body (a parser that gave up at the limit, or no reader at all)
  // left it paused: the parser keeps feeding it, and resume() throws it away.
  req.resume();
  // The body's reader stopped the socket's reads when its buffer filled; the HTTP parser reads
  // the handle itself, so the stream's resume() may not restart them: start them directly.
  socket.resume();
  const handle = (socket as unknown as { _handle?: { reading?: boolean; readStart?: () => number } })._handle;
  if (handle && !handle.reading && typeof handle.readStart === 'function') {
    handle.reading = true;
    handle.readStart();
  }
}
