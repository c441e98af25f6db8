import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseScrape } from './prometheus-text';
import { request, ServiceProcess } from './service-harness';
import { until } from './tenant-code';
import { elapse } from './wait';

/**
 * Several service instances (child processes of `dist/src/main.js`) on one store, as an operator
 * runs them: one DATABASE_URL, one REDIS_URL (when given), one WEBHOOK_SECRETS_KEY, a data dir each.
 */
export class Cluster {
  readonly instances: ServiceProcess[] = [];
  private readonly dirs: string[] = [];

  private constructor() {}

  static async start(count: number, env: Record<string, string>): Promise<Cluster> {
    const cluster = new Cluster();
    const shared = { WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'), ...env };
    for (let i = 0; i < count; i++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `es-multi-${i}-`));
      cluster.dirs.push(dir);
      cluster.instances.push(new ServiceProcess({ ...shared, DATA_DIR: dir }));
    }
    // One at a time: the first creates the schema, and three .NET hosts starting at once on 2 cores time out.
    for (const s of cluster.instances) await s.start();
    return cluster;
  }

  /**
   * Waits for an instance's `/health/ready` to answer 200, as a load balancer (or a rolling restart)
   * does before counting it in: `start()` waits only for `/health`, and a started instance is not
   * ready until its shared executors are warmed up (issue 12), a few seconds on a busy machine.
   */
  async ready(index: number, timeoutMs = 60_000): Promise<void> {
    const url = `${this.instances[index].url}/health/ready`;
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      last = await request(url, 'GET').catch((e) => ({ status: 0, body: String(e) }));
      if ((last as { status: number }).status === 200) return;
      await elapse(100, 'poll interval: the instance is starting');
    }
    throw new Error(`instance ${index} not ready within ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }

  urls(): string[] {
    return this.instances.map((s) => s.url);
  }

  /** The sum over every instance of a metric series (a restarted instance counts from 0 again). */
  async metricSum(name: string, labels: Record<string, string> = {}): Promise<number> {
    let sum = 0;
    for (const s of this.instances) {
      const res = await fetch(`${s.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
      sum += parseScrape(await res.text()).sum(name, labels);
    }
    return sum;
  }

  /** Lines at error level (JSON logs) of every instance, in every run of it so far. */
  errorLines(): string[] {
    return this.instances.flatMap((s) => s.output.split('\n').filter((l) => /"level":"(error|fatal)"/.test(l)));
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.instances.map((s) => (s.child && s.child.exitCode === null && s.child.signalCode === null ? s.kill('SIGTERM') : null)),
    );
    for (const d of this.dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

export interface Ack {
  aggregateId: string;
  version: number;
  position: number;
  eventId: string;
  eventType: string;
  data: unknown;
  /** Epoch ms when the 201 arrived. */
  at: number;
  via: number;
}

interface AggregateCursor {
  id: string;
  customer: string;
  version: number;
  busy: boolean;
  /** An append whose answer never came (instance killed): its outcome is read back before the next one. */
  uncertain: boolean;
}

/**
 * Appends at a steady rate, each through the next instance in turn (round-robin), every one with
 * `expectedVersion`: `order-<i>` aggregates whose first event is an OrderPlaced for one of
 * `customers` customers and the rest ItemAdded for the same customer (so every event changes that
 * customer's customer-totals state: one notification per event). A request that fails without an
 * answer leaves the aggregate's version unknown; it is read back through another instance first.
 */
export class AppendLoad {
  readonly acks: Ack[] = [];
  /** Requests without an answer (connection refused or reset), and answers other than 201/409. */
  unanswered = 0;
  readonly otherStatuses: { status: number; at: number }[] = [];
  conflicts = 0;
  private readonly cursors: AggregateCursor[];
  private timer?: NodeJS.Timeout;
  private next = 0;
  private via = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly urls: () => string[],
    private readonly key: string,
    private readonly opts: { perSecond: number; aggregates: number; customers: number; prefix?: string },
  ) {
    this.cursors = Array.from({ length: opts.aggregates }, (_, i) => ({
      id: `${opts.prefix ?? 'order'}-${i}`,
      customer: `cust-${i % opts.customers}`,
      version: 0,
      busy: false,
      uncertain: false,
    }));
  }

  /** Waits until `n` appends in all have been acknowledged (60 s at most). */
  acknowledged(n: number): Promise<number> {
    return until(
      () => this.acks.length,
      (a) => a >= n,
      60_000,
      `${n} appends acknowledged`,
    );
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.round(1000 / this.opts.perSecond)));
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  aggregateIds(): string[] {
    return this.cursors.map((c) => c.id);
  }

  private tick(): void {
    for (let tries = 0; tries < this.cursors.length; tries++) {
      const c = this.cursors[this.next++ % this.cursors.length];
      if (c.busy) continue;
      c.busy = true;
      const via = this.via++ % this.urls().length;
      const p = this.append(c, via).finally(() => {
        c.busy = false;
        this.inFlight.delete(p);
      });
      this.inFlight.add(p);
      return;
    }
  }

  private async append(c: AggregateCursor, via: number): Promise<void> {
    const url = this.urls()[via];
    try {
      if (c.uncertain) {
        const read = await request(`${url}/events/${c.id}`, 'GET', undefined, { 'x-api-key': this.key });
        if (read.status !== 200 && read.status !== 404) return;
        c.version = read.status === 404 ? 0 : read.body.events.length;
        c.uncertain = false;
      }
      const eventType = c.version === 0 ? 'OrderPlaced' : 'ItemAdded';
      const price = ((c.version * 7 + c.id.length) % 5) + 1;
      const data =
        c.version === 0
          ? { customerId: c.customer, lines: [{ sku: 'a', qty: 1, price }] }
          : { sku: 'b', qty: 1, price, customerId: c.customer };
      const res = await request(
        `${url}/events`,
        'POST',
        { aggregateId: c.id, eventType, data, expectedVersion: c.version },
        {
          'x-api-key': this.key,
        },
      );
      if (res.status === 201) {
        this.acks.push({
          aggregateId: c.id,
          version: res.body.version,
          position: res.body.position,
          eventId: res.body.eventId,
          eventType,
          data,
          at: Date.now(),
          via,
        });
        c.version = res.body.version;
      } else if (res.status === 409) {
        this.conflicts++;
        c.version = res.body.actualVersion;
      } else {
        this.otherStatuses.push({ status: res.status, at: Date.now() });
        c.uncertain = true;
      }
    } catch {
      this.unanswered++;
      c.uncertain = true;
    }
  }
}

/** Milliseconds from the 201 of each append acknowledged in [from, to] to its first notification on any stream. */
export function ackToNotification(
  acks: Ack[],
  seen: { aggregateId: string; version: number; at: number }[],
  from: number,
  to: number,
): number[] {
  const first = new Map<string, number>();
  for (const s of seen) {
    const k = `${s.aggregateId}\u0000${s.version}`;
    const t = first.get(k);
    if (t === undefined || s.at < t) first.set(k, s.at);
  }
  return acks
    .filter((a) => a.at >= from && a.at <= to)
    .map((a) => (first.get(`${a.aggregateId}\u0000${a.version}`) ?? Number.POSITIVE_INFINITY) - a.at);
}

export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** Sequences seen more than once, and those of 1..max never seen. */
export function gapsAndDuplicates(seqs: number[], max: number): { missing: number[]; duplicates: number[]; outOfOrder: number } {
  const count = new Map<number, number>();
  let outOfOrder = 0;
  seqs.forEach((s, i) => {
    count.set(s, (count.get(s) ?? 0) + 1);
    if (i > 0 && s <= seqs[i - 1]) outOfOrder++;
  });
  return {
    missing: range(1, max).filter((s) => !count.has(s)),
    duplicates: [...count].filter(([, n]) => n > 1).map(([s]) => s),
    outOfOrder,
  };
}
