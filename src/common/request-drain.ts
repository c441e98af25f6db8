import type { FastifyInstance } from 'fastify';
import { DomainError } from './domain-error';
import { errorHeaders, statusOf, toErrorBody } from './error-http-mapping';

/** The refusal of a request that arrives while the instance drains: its status and body come from the one mapping. */
export const shuttingDown = (): DomainError =>
  new DomainError('SERVICE_UNAVAILABLE', 'the service is shutting down; retry on another instance');

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
        const err = shuttingDown();
        // `Connection: close` is the drain's own: the instance is going away, whatever the error.
        void reply.header('connection', 'close').headers(errorHeaders(err)).code(statusOf(err.code)).send(toErrorBody(err));
        return;
      }
      // A long-lived route (a server-sent-events stream) never finishes on its own: the app's
      // shutdown ends it, so waiting for it here would only hold every SIGTERM for the whole grace.
      if ((req.routeOptions.config as { longLived?: boolean } | undefined)?.longLived) return done();
      this.inflight++;
      // 'close' fires once the response is sent or the client went away mid-request, so an
      // aborted request cannot leave the count stuck (onResponse alone misses those).
      reply.raw.once('close', () => {
        if (--this.inflight === 0 && this.closing) this.idleWaiters.splice(0).forEach((w) => w());
      });
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
