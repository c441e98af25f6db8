/**
 * What the hops of the service tell the metrics (issue 14): one typed port, injected where a hop
 * needs it, never a global. This class is also the "off" implementation: every method does
 * nothing, so unit setups, and a service with METRICS_ENABLED=false, pay one empty call per hop.
 * PrometheusMetrics (prometheus-metrics.ts) is the one that counts.
 *
 * Labels are bounded by design: no method takes a state key, an aggregate id or an event id.
 * Durations are in seconds (Prometheus' base unit).
 */
export type ApplyKind = 'reducer' | 'projection';
/** ok: every event applied; failed: the tenant's code threw, timed out or crashed its process. */
export type ApplyOutcome = 'ok' | 'failed';
/** delivered: 2xx; failed: retried later; dead: no retry left, dead-lettered. */
export type WebhookOutcome = 'delivered' | 'failed' | 'dead';
export type HostMode = 'exec' | 'compile';
/** compiled / failed: recorded; retry: left pending (a compiler crash, the runtime unavailable). */
export type CompileOutcome = 'compiled' | 'failed' | 'retry';
export type RatePolicyName = 'appends' | 'events' | 'uploads';

export class AppMetrics {
  /** Whether anything is counted (the HTTP hook is not installed when not). */
  get enabled(): boolean {
    return false;
  }

  /** One HTTP response; `route` is the route's template (`/projections/:id/status`), never the URL. */
  httpResponded(_route: string, _method: string, _status: number, _seconds: number): void {}

  /** One group commit: the append requests in its transaction, those it stored (a conflict stores nothing), and their events. */
  groupCommitted(_batchSize: number, _storedRequests: number, _storedEvents: number): void {}

  /** One Apply call into the tenant's executor (a reducer fold, a lane run). */
  applied(_kind: ApplyKind, _outcome: ApplyOutcome, _seconds: number): void {}

  /** One webhook attempt that reached the sender, and its outcome. */
  webhookAttempted(_outcome: WebhookOutcome, _seconds: number): void {}

  /** A delivery dead-lettered without an attempt (webhook removed, notification expired). */
  webhookDeadLettered(): void {}

  /** The repair sweep made a key's oldest waiting delivery its head (the key had none: its deliveries were stuck). */
  webhookHeadRepaired(): void {}

  /** A runtime host process started; `restart` when it replaces an earlier process of the same executor or compiler. */
  hostStarted(_mode: HostMode, _restart: boolean): void {}

  /** One compile ended (durations of the compiler call, queueing excluded). */
  compiled(_outcome: CompileOutcome, _seconds: number): void {}

  /** A request refused by a tenant's rate quota. */
  rateLimited(_tenantId: string, _policy: RatePolicyName): void {}
}

/** The port doing nothing: the default where no metrics are wired (unit setups). */
export const NO_METRICS = new AppMetrics();

/** Seconds since `startedMs` (a performance.now() reading). */
export const secondsSince = (startedMs: number): number => (performance.now() - startedMs) / 1000;
