import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { errorHeaders, statusOf, toErrorBody } from '../common/error-http-mapping';
import { routeOptionsOf } from '../common/route-options';
import { TenantRequest } from '../tenancy/current-tenant.decorator';

export interface AppendTurnsOptions {
  /** Append requests of one tenant past authentication and not yet answered, per instance; 0 = no limit. */
  inFlightPerTenant: number;
  /** Append requests of one tenant waiting for a turn, per instance; past it → 429 RATE_LIMITED. */
  queuedPerTenant: number;
  /** The limits hold while another tenant appended on this instance within this long (ms). */
  contentionWindowMs: number;
}

interface Turns {
  running: number;
  waiting: (() => void)[];
}

/**
 * Per-tenant turns on an instance's event loop for appends (issue 25 item 5). Parsing and checking
 * a 100-event batch costs the event loop milliseconds; a tenant flooding batches from many
 * connections would otherwise have all of them parsed in one turn of the loop, and another
 * tenant's single append waits behind all of them. Here a tenant has at most `inFlightPerTenant`
 * append requests between authentication and answer; the rest wait, in arrival order, before their
 * body is read (a waiting body costs nothing: the socket stops being read). Another tenant's
 * append does not wait on them at all. A tenant that keeps more than `queuedPerTenant` waiting is
 * answered 429 RATE_LIMITED (policy `appends-in-flight`).
 *
 * Work-conserving: the limit holds only while another tenant appended on this instance within the
 * last `contentionWindowMs`. A tenant alone keeps every connection's request in flight (the group
 * commit needs them to fill its transactions); one of 1,000 tenants each with a request or two is
 * never held either.
 *
 * Plain class: `enter` / the release it returns are what the hook uses, testable without Fastify.
 */
export class AppendTurns {
  private readonly byTenant = new Map<string, Turns>();
  /** Tenants that appended lately, with when; swept once a window. */
  private readonly recent = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    private readonly options: AppendTurnsOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Resolves with the release once the tenant has a turn; rejects (429) when too many already wait. */
  enter(tenantId: string): Promise<() => void> | (() => void) {
    let t = this.byTenant.get(tenantId);
    if (!t) this.byTenant.set(tenantId, (t = { running: 0, waiting: [] }));
    const turns = t;
    // Every append notes its tenant as active, whether or not it waits.
    const contended = this.contended(tenantId);
    if (turns.running < this.options.inFlightPerTenant || !contended) {
      turns.running++;
      return this.releaser(tenantId, turns);
    }
    if (turns.waiting.length >= this.options.queuedPerTenant) {
      throw new DomainError(
        'RATE_LIMITED',
        `over the tenant's ${this.options.inFlightPerTenant} append requests in progress and ${this.options.queuedPerTenant} waiting on this instance; retry in 1 s`,
        { policy: 'appends-in-flight', limit: this.options.inFlightPerTenant + this.options.queuedPerTenant, retryAfterSeconds: 1 },
      );
    }
    return new Promise((resolve) => turns.waiting.push(() => resolve(this.releaser(tenantId, turns))));
  }

  /** Whether another tenant appended lately (and notes that this one does now). */
  private contended(tenantId: string): boolean {
    const now = this.sweep();
    this.recent.set(tenantId, now);
    return this.recent.size > 1;
  }

  /** Whether more than one tenant appended lately (asked by a releasing tenant, itself among them). */
  private othersActive(): boolean {
    this.sweep();
    return this.recent.size > 1;
  }

  /** Forgets tenants quiet for a window, at most once a window (so a sweep costs nothing per append). */
  private sweep(): number {
    const now = this.now();
    if (now - this.lastSweep >= this.options.contentionWindowMs) {
      this.lastSweep = now;
      for (const [id, at] of this.recent) if (now - at >= this.options.contentionWindowMs) this.recent.delete(id);
    }
    return now;
  }

  /** Tenants with a request running or waiting (the map never keeps an idle tenant). */
  get activeTenants(): number {
    return this.byTenant.size;
  }

  private releaser(tenantId: string, turns: Turns): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = turns.waiting.shift();
      if (next) {
        // The turn passes straight to the next waiting request: `running` stays as it is.
        next();
        // Nobody else appends any more: the rest of the queue goes too, or it would stay at the limit.
        if (!this.othersActive()) {
          for (let more = turns.waiting.shift(); more; more = turns.waiting.shift()) {
            turns.running++;
            more();
          }
        }
        return;
      }
      if (--turns.running === 0) this.byTenant.delete(tenantId);
    };
  }
}

/** Installs the turns on the append routes (`@Quota('append' | 'append-batch')`), after authentication. */
export function installAppendTurns(fastify: FastifyInstance, turns: AppendTurns, options: AppendTurnsOptions): void {
  if (options.inFlightPerTenant === 0) return;
  // A callback hook, not an async one: a request with a free turn (the usual case) goes on in the
  // same tick, without a promise.
  fastify.addHook('onRequest', (req: FastifyRequest & TenantRequest, reply, done) => {
    const quota = routeOptionsOf(req).quota;
    if ((quota !== 'append' && quota !== 'append-batch') || !req.tenant) return done();
    const go = (release: () => void) => {
      // 'close' fires once the answer is sent or the client went away, so no turn is ever kept.
      if (reply.raw.closed || req.raw.socket?.destroyed) release();
      else reply.raw.once('close', release);
      done();
    };
    try {
      const entered = turns.enter(req.tenant.tenantId);
      if (typeof entered === 'function') return go(entered);
      entered.then(go, done);
    } catch (e) {
      if (!(e instanceof DomainError)) return done(e as Error);
      // Answered before the body is read: the connection closes behind it (refused-body-linger.ts reads the rest).
      void reply
        .code(statusOf(e.code))
        .headers({ ...errorHeaders(e), connection: 'close' })
        .send(toErrorBody(e));
    }
  });
}
