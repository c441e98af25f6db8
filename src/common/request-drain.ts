import type { FastifyInstance, FastifyRequest } from 'fastify';

const COUNTED = Symbol('es.counted');

/**
 * Graceful shutdown that does not depend on clients closing keep-alive sockets: once closing,
 * new requests get 503 with `Connection: close`; requests already running finish (their appends
 * commit and are answered); then every socket is closed and the app can shut down.
 */
export class RequestDrain {
  private inflight = 0;
  private closing = false;
  private idleWaiters: (() => void)[] = [];

  install(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', (req, reply, done) => {
      if (this.closing) {
        void reply
          .header('connection', 'close')
          .code(503)
          .send({ error: 'SERVICE_UNAVAILABLE', message: 'the service is shutting down; retry on another instance' });
        return;
      }
      (req as FastifyRequest & { [COUNTED]?: boolean })[COUNTED] = true;
      this.inflight++;
      done();
    });
    const settle = (req: FastifyRequest) => {
      const r = req as FastifyRequest & { [COUNTED]?: boolean };
      if (!r[COUNTED]) return;
      r[COUNTED] = false;
      if (--this.inflight === 0 && this.closing) this.idleWaiters.splice(0).forEach((w) => w());
    };
    fastify.addHook('onResponse', (req, _reply, done) => {
      settle(req);
      done();
    });
    fastify.addHook('onRequestAbort', (req, done) => {
      settle(req);
      done();
    });
  }

  /** Starts refusing new requests; resolves when the running ones are answered, or after timeoutMs. */
  async drain(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
