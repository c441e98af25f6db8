import { Counter, Histogram, Registry } from 'prom-client';

type CounterChild = ReturnType<Counter['labels']>;
type HistogramChild = ReturnType<Histogram['labels']>;
import { AppMetrics, ApplyKind, ApplyOutcome, CompileOutcome, HostMode, RatePolicyName, WebhookOutcome } from './app-metrics';

/** The HTTP methods kept as label values; anything else is `OTHER` (a client picks the method). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Requests that matched no route share one label value (the URL is never a label). */
export const UNMATCHED_ROUTE = '(unmatched)';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
const COMPILE_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

/**
 * The counters and histograms incremented at the hops, in a registry of its own (not prom-client's
 * global one, so two services in one process, as in the tests, do not collide). The gauges read
 * from state at scrape time are registered on the same registry by ScrapeGauges.
 *
 * Hot paths (an HTTP response, a group commit) use label children resolved once and cached, so
 * a count costs a map lookup and an add, not a hash of the label set.
 */
export class PrometheusMetrics extends AppMetrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({
    name: 'eventstore_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'eventstore_http_request_duration_seconds',
    help: 'Time from a request received to its response sent, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly http = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<string> }>();
  private readonly appendRequests;
  private readonly events;
  private readonly batchSize;
  private readonly applyCalls = new Counter({
    name: 'eventstore_apply_calls_total',
    help: 'Apply calls into the tenant executors (kind reducer: a fold on an append or a read; projection: a lane run), by outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly applyFailures = new Counter({
    name: 'eventstore_apply_failures_total',
    help: 'Apply calls that failed: the tenant code threw, passed its deadline or crashed its process',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly applyDuration = new Histogram({
    name: 'eventstore_apply_duration_seconds',
    help: 'Duration of an Apply call into the tenant executor, queueing in the executor included',
    labelNames: ['kind'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly webhookDeliveries = new Counter({
    name: 'eventstore_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered, failed: retried later, dead: dead-lettered)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly webhookDuration = new Histogram({
    name: 'eventstore_webhook_delivery_duration_seconds',
    help: 'Duration of a webhook attempt (address check, connection, request, response), by outcome',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly deadLetters = new Counter({
    name: 'eventstore_webhook_dead_letters_total',
    help: 'Webhook deliveries dead-lettered (no retry left, or nothing left to send)',
    registers: [this.registry],
  });
  private readonly headsRepaired = new Counter({
    name: 'eventstore_webhook_heads_repaired_total',
    help: 'Keys whose webhook deliveries waited with no head, given one by the repair sweep (0 unless the head rule broke)',
    registers: [this.registry],
  });
  private readonly hostRestarts = new Counter({
    name: 'eventstore_runtime_host_restarts_total',
    help: 'Runtime host processes started to replace an earlier one of the same executor or compiler slot, by mode',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });
  private readonly hostStarts = new Counter({
    name: 'eventstore_runtime_host_starts_total',
    help: 'Runtime host processes started, by mode (exec: executors, compile: compilers)',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });
  private readonly compileDuration = new Histogram({
    name: 'eventstore_compile_duration_seconds',
    help: 'Duration of one compile on a compiler host, by outcome',
    labelNames: ['outcome'] as const,
    buckets: COMPILE_BUCKETS,
    registers: [this.registry],
  });
  private readonly rateRefusals = new Counter({
    name: 'eventstore_rate_limit_refusals_total',
    help: "Requests refused by a tenant's rate quota, by tenant and policy",
    labelNames: ['tenant', 'policy'] as const,
    registers: [this.registry],
  });

  /** `store`: the adapter in use (sqlite | postgres), a constant label of the append families. */
  constructor(store: 'sqlite' | 'postgres') {
    super();
    this.appendRequests = new Counter({
      name: 'eventstore_append_requests_total',
      help: 'Append requests stored (one per POST /events or /events/batch, and per reducer-checked append), by store',
      labelNames: ['store'] as const,
      registers: [this.registry],
    }).labels(store);
    this.events = new Counter({
      name: 'eventstore_events_appended_total',
      help: 'Events stored, by store',
      labelNames: ['store'] as const,
      registers: [this.registry],
    }).labels(store);
    this.batchSize = new Histogram({
      name: 'eventstore_group_commit_batch_size',
      help: 'Append requests per group commit (one transaction), by store',
      labelNames: ['store'] as const,
      buckets: BATCH_BUCKETS,
      registers: [this.registry],
    }).labels(store);
  }

  override get enabled(): boolean {
    return true;
  }

  override httpResponded(route: string, method: string, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'OTHER';
    const id = `${route} ${m} ${status}`;
    let c = this.http.get(id);
    if (!c) {
      const labels = { route, method: m, status: String(status) };
      c = { count: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.http.set(id, c);
    }
    c.count.inc();
    c.duration.observe(seconds);
  }

  override groupCommitted(batchSize: number, storedRequests: number, storedEvents: number): void {
    this.batchSize.observe(batchSize);
    if (storedRequests > 0) this.appendRequests.inc(storedRequests);
    if (storedEvents > 0) this.events.inc(storedEvents);
  }

  /** Apply's label children, resolved once: one per lane run and per reducer fold, a hot path. */
  private readonly applyChildren = Object.fromEntries(
    (['reducer', 'projection'] as const).map((kind) => [
      kind,
      {
        ok: this.applyCalls.labels(kind, 'ok'),
        failed: this.applyCalls.labels(kind, 'failed'),
        failures: this.applyFailures.labels(kind),
        duration: this.applyDuration.labels(kind),
      },
    ]),
  ) as Record<ApplyKind, { ok: CounterChild; failed: CounterChild; failures: CounterChild; duration: HistogramChild }>;

  override applied(kind: ApplyKind, outcome: ApplyOutcome, seconds: number): void {
    const c = this.applyChildren[kind];
    c[outcome].inc();
    if (outcome === 'failed') c.failures.inc();
    c.duration.observe(seconds);
  }

  override webhookAttempted(outcome: WebhookOutcome, seconds: number): void {
    this.webhookDeliveries.labels(outcome).inc();
    this.webhookDuration.labels(outcome).observe(seconds);
    if (outcome === 'dead') this.deadLetters.inc();
  }

  override webhookDeadLettered(): void {
    this.deadLetters.inc();
  }

  override webhookHeadRepaired(): void {
    this.headsRepaired.inc();
  }

  override hostStarted(mode: HostMode, restart: boolean): void {
    this.hostStarts.labels(mode).inc();
    if (restart) this.hostRestarts.labels(mode).inc();
  }

  override compiled(outcome: CompileOutcome, seconds: number): void {
    this.compileDuration.labels(outcome).observe(seconds);
  }

  override rateLimited(tenantId: string, policy: RatePolicyName): void {
    this.rateRefusals.labels(tenantId, policy).inc();
  }
}
