import { Ack, ackToNotification, AppendLoad, Cluster, gapsAndDuplicates, range } from '../support/multi-instance';
import { RoamingStream } from '../support/roaming-streams';
import { exampleSources } from '../support/runtime-harness';
import { Client, clientFor, newTenant, request } from '../support/service-harness';
import { envFor, SCHEDULER_BACKENDS, schedulerEnv, stopBackends } from '../support/store-backends';
import { projectionActive, settle, until, uploadProjection } from '../support/tenant-code';
import { ThrowawayRedis } from '../support/throwaway-redis';
import { WebhookReceiver } from '../support/webhook-receiver';
import { elapse } from '../support/wait';

/**
 * Issue 23: three instances (A, B, C) on one PostgreSQL (and one Redis with BullMQ lanes), clients
 * spreading appends round-robin with `expectedVersion`, one projection (20 keys) with a webhook
 * and streams roaming between instances; then kill -9 of B under load, Redis down for 10 s, and a
 * rolling SIGTERM of all three. Nothing acknowledged lost, nothing done twice, nothing stuck.
 *
 * The load phase records what it sees and asserts nothing itself, so that each promise below fails
 * (or passes) on its own.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LOG_LEVEL: 'warn',
  LANE_SWEEP_MS: '500',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_BACKOFF_MS: '100,200,500,1000,1000,1000,1000,1000',
  STREAM_PING_MS: '1000',
  SSE_HEARTBEAT_MS: '500',
  SHUTDOWN_GRACE_MS: '3000',
  RUNTIME_COMPILER_HOSTS: '1',
};
const CUSTOMERS = 20;
/** How long everything may take to settle once the load stops: "within seconds", on a busy 2-core machine. */
const SETTLE_MS = 20_000;
/**
 * Ack → first notification for appends acknowledged just before an instance went away. After a
 * kill -9 with BullMQ a running lane waits for its lease (LANE_LEASE_MS, 3 s) and its job for the
 * next stalled check (every 1.5 s): 4.5 s before another worker may even take it, so 5 s left half a
 * second for the run itself and failed at 5,171 ms on a loaded machine (a 183 s run); the lane
 * takeover bench measured 1.8–6.1 s for it (docs/operations.md). In-process lanes wait for a sweep.
 */
const TAKEOVER_AFTER_KILL_MS: Record<string, number> = { 'in-process': 5_000, bullmq: 6_500 };
/**
 * A webhook the receiver accepted before the kill -9 may be sent again once its claim lapses
 * (WEBHOOK_TIMEOUT_MS 10 s + 5 s after it was claimed) if its sender was the killed instance and
 * had not yet recorded the 2xx: no sender can know whether a request it never heard back about
 * arrived. That is the contract's at-least-once (docs/notifications.md: the same `webhook-id` on
 * every attempt, for receivers to deduplicate). So a repeat is excused only when it is one copy
 * accepted within a claim's life before the kill and one after it; any other repeat fails.
 */
const CLAIM_MS = 15_000;
// A stopped instance hands its lanes over at once; what remains is the next instance's run of the lane.
// Measured 74–3,488 ms (and 3,804 / 3,890 ms) with the machine at load average 10–15 on 2 cores, so the
// bound is 4.5 s: above that, the handover did not happen (the lease would have lapsed instead).
const TAKEOVER_AFTER_SIGTERM_MS = 4_500;

const names = ['A', 'B', 'C'];

describe.each(SCHEDULER_BACKENDS)('three instances on one PostgreSQL, %s lanes', (scheduler) => {
  let cluster: Cluster;
  let redis: ThrowawayRedis | undefined;
  let receiver: WebhookReceiver;
  let t: Client;
  let projectionId: string;
  let load: AppendLoad;
  let streams: RoamingStream[] = [];
  const figures: Record<string, unknown> = { scheduler };
  const readyWhileRedisDown: { instance: string; status: number; failing?: Record<string, unknown> }[] = [];
  let killedAt = 0;
  const redisDown = { from: 0, to: 0 };
  const sigtermAt: number[] = [];
  let loadStoppedAt = 0;
  /** Order events in the store once the load is over: one notification each. */
  let expectedNotifications = -1;

  const via = (i: number) => clientFor(cluster.instances[i].url, t.key, t.tenantId);
  const urls = () => cluster.urls();

  beforeAll(async () => {
    const env: Record<string, string> = { ...(await envFor('postgres')), ...FAST };
    if (scheduler === 'bullmq') {
      // A Redis of this file's own: it is stopped and started again below.
      redis = await ThrowawayRedis.start();
      env.REDIS_URL = redis.url;
    } else {
      Object.assign(env, await schedulerEnv(scheduler));
    }
    receiver = await new WebhookReceiver().start();
    cluster = await Cluster.start(3, env);
    t = await newTenant(cluster.instances[0].url, `multi-${scheduler}`);
    const up = await uploadProjection(cluster.instances[0].url, t.key, exampleSources('customer-totals'), {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    projectionId = await projectionActive(cluster.instances[0].url, t.key, up.uploadId);
  }, 240_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    await cluster?.stop();
    await receiver?.stop();
    await redis?.stop();
    // The figures BENCHMARKS.md quotes.
    process.stdout.write(`multi-instance figures: ${JSON.stringify(figures)}\n`);
  }, 60_000);

  it('compiles each of two uploads sent at once through A and B exactly once, and logs no error', async () => {
    // A tenant of its own, so that these projections route none of the workload's events.
    const other = await newTenant(cluster.instances[0].url, `compiles-${scheduler}`);
    const compiles = () => cluster.metricSum('eventstore_compile_duration_seconds_count');
    const before = await compiles();
    const source = (name: string) =>
      exampleSources('customer-totals').map((s) => ({
        ...s,
        content: s.content.replace('[ProjectionName("customer-totals")]', `[ProjectionName("${name}")]`),
      }));
    const ups = await Promise.all([
      uploadProjection(cluster.instances[0].url, other.key, source('totals-a')),
      uploadProjection(cluster.instances[1].url, other.key, source('totals-b')),
    ]);
    // Deployed, as every instance sees it; then no upload left pending in the store.
    for (const i of [0, 1, 2]) for (const up of ups) await projectionActive(cluster.instances[i].url, other.key, up.uploadId);
    await until(
      () => cluster.metricSum('eventstore_compile_queue_depth'),
      (n) => n === 0,
      60_000,
      'no upload pending',
    );
    // A second compile of an upload starts when the first does (another instance took the same pending
    // upload), so it ends within a compile's time (0.2-1.5 s here): watched for 3 s, not waited on.
    const counted = await settle(compiles, (n) => n - before > 2, Date.now() + 3_000);
    figures.compilesForTwoUploads = counted - before;
    // Both at once, so that a failure shows the doubled work and what it logged.
    const errors = cluster.errorLines().map((l) => l.slice(0, 300));
    expect({ compiles: figures.compilesForTwoUploads, errors }).toEqual({ compiles: 2, errors: [] });
  });

  it('gives one 201 and two 409 for each round of one expectedVersion sent through A, B and C at once', async () => {
    const outcomes: number[][] = [];
    for (let round = 0; round < 10; round++) {
      const statuses = await Promise.all(
        [0, 1, 2].map(
          async (i) =>
            (await via(i).post('/events', { aggregateId: 'race-1', eventType: 'Raced', data: { round, i }, expectedVersion: round }))
              .status,
        ),
      );
      outcomes.push(statuses.sort());
    }
    expect(outcomes).toEqual(range(1, 10).map(() => [201, 409, 409]));
  });

  it('runs the workload through kill -9, Redis down for 10 s and a rolling SIGTERM (recording; asserted below)', async () => {
    // WebSocket on B, SSE on C, WebSocket on A; each moves to the next instance when its own goes away.
    streams = [
      new RoamingStream('websocket', urls, 1, projectionId, t.key),
      new RoamingStream('sse', urls, 2, projectionId, t.key),
      new RoamingStream('websocket', urls, 0, projectionId, t.key),
    ];
    await Promise.all(streams.map((s) => s.open()));
    load = new AppendLoad(urls, t.key, { perSecond: 30, aggregates: 40, customers: CUSTOMERS });
    load.start();
    try {
      await load.acknowledged(60);
      killedAt = Date.now();
      await cluster.instances[1].kill('SIGKILL');
      await load.acknowledged(load.acks.length + 60);
      await cluster.instances[1].start();
      // Counted in again only once ready (its executors warmed up), as behind a load balancer: the
      // readiness asserted below is that of instances that were ready when Redis went down.
      await cluster.ready(1);

      if (redis) {
        await redis.down();
        redisDown.from = Date.now();
        const downUntil = Date.now() + 10_000;
        while (Date.now() < downUntil) {
          for (const [i, s] of cluster.instances.entries()) {
            const r = await request(`${s.url}/health/ready`, 'GET').catch((e) => ({ status: 0, body: { error: String(e) } }));
            // A 503 names what held readiness back: its sections are kept, so that a failure says why.
            const failing =
              r.status === 200 ? undefined : Object.fromEntries(((r.body?.failing as string[]) ?? ['error']).map((k) => [k, r.body?.[k]]));
            readyWhileRedisDown.push({ instance: names[i], status: r.status, ...(failing ? { failing } : {}) });
          }
          await elapse(500, 'sampling period of readiness while Redis is down');
        }
        redisDown.to = Date.now();
        await redis.up();
        await load.acknowledged(load.acks.length + 30);
      }

      for (const s of cluster.instances) {
        await load.acknowledged(load.acks.length + 30);
        sigtermAt.push(Date.now());
        await s.kill('SIGTERM');
        await s.start();
      }
      await load.acknowledged(load.acks.length + 30);
    } finally {
      await load.stop();
      loadStoppedAt = Date.now();
    }
    figures.acknowledged = load.acks.length;
    figures.unanswered = load.unanswered;
    figures.conflicts = load.conflicts;
    figures.reconnects = streams.map((s) => s.reconnects);
    expect(load.acks.length).toBeGreaterThan(200);
  });

  it('reads back every acknowledged append identically through every instance: versions contiguous, positions exactly 1..N', async () => {
    const stored = new Map<string, any[]>();
    for (const id of [...load.aggregateIds(), 'race-1']) {
      const views = await Promise.all([0, 1, 2].map(async (i) => (await via(i).get(`/events/${id}?limit=10000`)).body));
      expect(views[1]).toEqual(views[0]);
      expect(views[2]).toEqual(views[0]);
      const events = views[0].events as any[];
      expect(events.map((e) => e.version)).toEqual(range(1, events.length));
      stored.set(id, events);
    }
    const byId = new Map<string, any>();
    for (const events of stored.values()) for (const e of events) byId.set(e.eventId, e);
    const wrong = load.acks.filter((a: Ack) => {
      const e = byId.get(a.eventId);
      return (
        !e ||
        e.aggregateId !== a.aggregateId ||
        e.version !== a.version ||
        e.position !== a.position ||
        e.eventType !== a.eventType ||
        JSON.stringify(e.data) !== JSON.stringify(a.data)
      );
    });
    expect(wrong).toEqual([]);
    const positions = [...byId.values()].map((e) => e.position).sort((a, b) => a - b);
    expect(positions).toEqual(range(1, positions.length));
    expectedNotifications = [...stored].filter(([id]) => id.startsWith('order-')).reduce((n, [, events]) => n + events.length, 0);
    figures.orderEvents = expectedNotifications;
  });

  it('delivers every notification on every stream once and in order across reconnects', async () => {
    expect(expectedNotifications).toBeGreaterThan(0);
    const deadline = loadStoppedAt + SETTLE_MS;
    for (const [i, s] of streams.entries()) {
      await settle(
        () => s.seen.length,
        (n) => n >= expectedNotifications,
        deadline,
      );
      expect({
        stream: i,
        transport: s.transport,
        ...gapsAndDuplicates(s.sequences(), expectedNotifications),
        count: s.seen.length,
      }).toEqual({
        stream: i,
        transport: s.transport,
        missing: [],
        duplicates: [],
        outOfOrder: 0,
        count: expectedNotifications,
      });
    }
  });

  it('delivers every webhook exactly once, in order per key, and leaves none pending', async () => {
    const deadline = loadStoppedAt + SETTLE_MS;
    const pending = async () => (await via(0).get(`/projections/${projectionId}/webhook`)).body?.webhook?.pendingDeliveries;
    await settle(
      () => receiver.accepted.length,
      (n) => n >= expectedNotifications,
      deadline,
    );
    const left = await settle(pending, (n) => n === 0, deadline);
    const { missing, duplicates: repeated } = gapsAndDuplicates(
      [...receiver.sequences()].sort((a, b) => a - b),
      expectedNotifications,
    );
    // Sent again because its sender was killed before recording it (see CLAIM_MS): twice, the first within a
    // claim's life before the kill, the second after it; never more, never elsewhere.
    const resentAfterKill = repeated.filter((seq) => {
      const at = receiver.accepted.filter((a) => a.sequence === seq).map((a) => a.at);
      return at.length === 2 && at[0] <= killedAt && at[0] >= killedAt - CLAIM_MS && at[1] > killedAt;
    });
    const duplicates = repeated.filter((seq) => !resentAfterKill.includes(seq));
    figures.webhooks = {
      accepted: receiver.accepted.length,
      missing: missing.length,
      duplicates: duplicates.length,
      resentAfterKill: resentAfterKill.length,
      pending: left,
    };
    // A repeat is shown with when each copy was accepted, in ms after the kill -9.
    const whenAccepted = (seq: number) => ({
      seq,
      msAfterKill: receiver.accepted.filter((a) => a.sequence === seq).map((a) => a.at - killedAt),
    });
    expect({ missing, duplicates: duplicates.map(whenAccepted), pending: left }).toEqual({ missing: [], duplicates: [], pending: 0 });
    const lastPerKey = new Map<string, number>();
    const outOfOrder = receiver.accepted.filter((a) => {
      const before = lastPerKey.get(a.body.stateKey) ?? 0;
      lastPerKey.set(a.body.stateKey, Math.max(before, a.sequence));
      return a.sequence < before;
    });
    expect(outOfOrder.map((a) => a.sequence)).toEqual([]);
  });

  it('reports lag 0 on every instance within seconds of the load ending', async () => {
    const lag = async (i: number) => (await via(i).get(`/projections/${projectionId}/status?include=lag`)).body?.activeVersion?.applyLag;
    const deadline = loadStoppedAt + SETTLE_MS;
    for (const i of [0, 1, 2]) {
      const l = await settle(
        () => lag(i),
        (v) => v?.lagEvents === 0 && v?.totalInboxDepth === 0,
        deadline,
      );
      expect({ instance: names[i], lagEvents: l?.lagEvents, totalInboxDepth: l?.totalInboxDepth, heldLanes: l?.heldLanes }).toEqual({
        instance: names[i],
        lagEvents: 0,
        totalInboxDepth: 0,
        heldLanes: 0,
      });
    }
  });

  it('keeps projection states byte-identical on all instances, and equal to the events', async () => {
    const expected = new Map<string, { orderCount: number; totalAmount: number }>();
    for (const id of load.aggregateIds()) {
      const events = (await via(0).get(`/events/${id}?limit=10000`)).body.events as any[];
      if (!events.length) continue;
      const customer = events[0].data.customerId;
      const w = expected.get(customer) ?? { orderCount: 0, totalAmount: 0 };
      w.orderCount++;
      for (const e of events) w.totalAmount += e.data.lines ? e.data.lines[0].price : e.data.price;
      expected.set(customer, w);
    }
    expect(expected.size).toBe(CUSTOMERS);
    for (const [customer, w] of expected) {
      const raw = await Promise.all(
        cluster.instances.map(async (s) => {
          const res = await fetch(`${s.url}/projections/${projectionId}/state/${customer}`, { headers: { 'x-api-key': t.key } });
          return `${res.status} ${await res.text()}`;
        }),
      );
      expect(raw[1]).toBe(raw[0]);
      expect(raw[2]).toBe(raw[0]);
      expect(JSON.parse(raw[0].slice(4)).state).toMatchObject({ orderCount: w.orderCount, totalAmount: w.totalAmount });
    }
  });

  it(`hands a killed instance's lanes over within ${TAKEOVER_AFTER_KILL_MS[scheduler]} ms and a stopped one's within ${TAKEOVER_AFTER_SIGTERM_MS} ms (ack → notification)`, () => {
    const seen = streams.flatMap((s) => s.seen);
    const worst = (at: number) => Math.max(0, ...ackToNotification(load.acks, seen, at - 1_000, at));
    figures.takeoverAfterKillMs = worst(killedAt);
    figures.takeoverAfterSigtermMs = sigtermAt.map(worst);
    expect(figures.takeoverAfterKillMs).toBeLessThanOrEqual(TAKEOVER_AFTER_KILL_MS[scheduler]);
    for (const ms of figures.takeoverAfterSigtermMs as number[]) expect(ms).toBeLessThanOrEqual(TAKEOVER_AFTER_SIGTERM_MS);
  });

  if (scheduler === 'bullmq') {
    it('keeps every instance ready (200) while Redis is down: appends and reads still work', () => {
      figures.readyWhileRedisDown = readyWhileRedisDown.reduce<Record<string, number>>(
        (m, r) => ({ ...m, [`${r.instance}:${r.status}`]: (m[`${r.instance}:${r.status}`] ?? 0) + 1 }),
        {},
      );
      expect(readyWhileRedisDown.length).toBeGreaterThan(0);
      // What the issue saw hold: appends went on (acknowledged through every instance, no 5xx).
      const during = load.acks.filter((a) => a.at >= redisDown.from && a.at <= redisDown.to);
      expect(new Set(during.map((a) => a.via)).size).toBe(3);
      expect(load.otherStatuses.filter((s) => s.at >= redisDown.from && s.at <= redisDown.to)).toEqual([]);
      expect(readyWhileRedisDown.filter((r) => r.status !== 200)).toEqual([]);
    });
  }
});
