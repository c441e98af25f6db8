import { ackToNotification, AppendLoad, Cluster } from '../test/support/multi-instance';
import { RoamingStream } from '../test/support/roaming-streams';
import { exampleSources } from '../test/support/runtime-harness';
import { clientFor, newTenant } from '../test/support/service-harness';
import { projectionActive, until, uploadProjection } from '../test/support/tenant-code';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { ThrowawayRedis } from '../test/support/throwaway-redis';
import { WebhookReceiver } from '../test/support/webhook-receiver';
import { fmt, median, NO_QUOTAS } from './bench-util';

/**
 * Several instances on one PostgreSQL (issue 23), the figures BENCHMARKS.md quotes:
 *
 *   1. Webhook throughput with 1 and with 3 instances: WEBHOOK_EVENTS events (one notification
 *      each, KEYS state keys) in batches of 10 from 16 clients spread over the instances; deliveries/s
 *      from the receiver's first to its last delivery (a backlog forms: the drain rate), and what
 *      never arrived (nothing new for 15 s: stuck).
 *   2. Takeover, 3 instances under a steady 30 appends/s: for the appends acknowledged in the
 *      second before an instance is killed (SIGKILL) or stopped (SIGTERM), the time from the 201 to
 *      their notification on a stream that moves to the next instance, worst of each, TAKEOVER_ROUNDS times.
 *
 * MI_SCHEDULERS=bullmq,in-process (default both): BullMQ lanes on a Redis the bench starts, or in-process lanes without Redis.
 * MI_PHASES=webhooks,takeover (default both).
 */
const WEBHOOK_EVENTS = Number(process.env.MI_WEBHOOK_EVENTS ?? 3000);
const KEYS = 100;
const TAKEOVER_ROUNDS = Number(process.env.MI_TAKEOVER_ROUNDS ?? 3);
const SCHEDULERS = (process.env.MI_SCHEDULERS ?? 'bullmq,in-process').split(',').map((s) => s.trim());
/** Which parts run: webhooks, takeover. */
const PHASES = new Set((process.env.MI_PHASES ?? 'webhooks,takeover').split(',').map((s) => s.trim()));
const ENV = {
  ...NO_QUOTAS,
  LOG_LEVEL: 'error',
  LANE_SWEEP_MS: '500',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_BACKOFF_MS: '200,500,1000,1000,1000,1000,1000,1000',
  QUOTA_WEBHOOKS_IN_FLIGHT: '64',
  SHUTDOWN_GRACE_MS: '3000',
  RUNTIME_COMPILER_HOSTS: '1',
};

async function webhookThroughput(pg: ThrowawayPostgres, schedulerEnv: Record<string, string>, instances: number): Promise<string> {
  const receiver = await new WebhookReceiver().start();
  const cluster = await Cluster.start(instances, { ...ENV, ...schedulerEnv, DATABASE_URL: await pg.createDatabase('mi_bench') });
  try {
    const t = await newTenant(cluster.instances[0].url, 'bench');
    const up = await uploadProjection(cluster.instances[0].url, t.key, exampleSources('customer-totals'), {
      webhook: { url: receiver.url },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    await projectionActive(cluster.instances[0].url, t.key, up.uploadId);
    const arrivals: number[] = [];
    const accepted = receiver.accepted;
    const push = accepted.push.bind(accepted);
    accepted.push = (...items) => {
      for (let k = 0; k < items.length; k++) arrivals.push(Date.now());
      return push(...items);
    };
    const appendStart = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        // Batches of 10 events on one order (10 notifications of one key): the backlog forms in seconds,
        // so what is measured is the delivery rate, not the append rate.
        for (let i = next++; i < WEBHOOK_EVENTS / 10; i = next++) {
          const customerId = `cust-${i % KEYS}`;
          const r = await clientFor(cluster.urls()[w % instances], t.key).post('/events/batch', {
            aggregateId: `order-${i}`,
            events: [
              { eventType: 'OrderPlaced', data: { customerId, lines: [{ sku: 'a', qty: 1, price: 1 }] } },
              ...Array.from({ length: 9 }, () => ({ eventType: 'ItemAdded', data: { sku: 'b', qty: 1, price: 1, customerId } })),
            ],
          });
          if (r.status !== 201) throw new Error(`append ${r.status}`);
        }
      }),
    );
    const appendSeconds = (Date.now() - appendStart) / 1000;
    const deadline = Date.now() + 120_000;
    while (new Set(receiver.sequences()).size < WEBHOOK_EVENTS && Date.now() < deadline) {
      const last = arrivals[arrivals.length - 1] ?? Date.now();
      // 15 s with nothing new: what is left is stuck.
      if (arrivals.length && Date.now() - last > 15_000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const distinct = new Set(receiver.sequences()).size;
    const seconds = (arrivals[arrivals.length - 1] - arrivals[0]) / 1000;
    return (
      `${instances} instance(s): appended in ${fmt(appendSeconds, 1)} s; ` +
      `${fmt(distinct)} of ${fmt(WEBHOOK_EVENTS)} delivered in ${fmt(seconds, 1)} s = ${fmt(distinct / seconds)} deliveries/s` +
      `, ${fmt(accepted.length - distinct)} duplicates, ${fmt(WEBHOOK_EVENTS - distinct)} never delivered`
    );
  } finally {
    await cluster.stop();
    await receiver.stop();
  }
}

async function takeover(pg: ThrowawayPostgres, schedulerEnv: Record<string, string>): Promise<string> {
  const cluster = await Cluster.start(3, { ...ENV, ...schedulerEnv, DATABASE_URL: await pg.createDatabase('mi_bench') });
  const t = await newTenant(cluster.instances[0].url, 'bench');
  const up = await uploadProjection(cluster.instances[0].url, t.key, exampleSources('customer-totals'), { sse: true });
  const projectionId = await projectionActive(cluster.instances[0].url, t.key, up.uploadId);
  const stream = new RoamingStream('websocket', () => cluster.urls(), 0, projectionId, t.key);
  await stream.open();
  const load = new AppendLoad(() => cluster.urls(), t.key, { perSecond: 30, aggregates: 40, customers: 20 });
  load.start();
  const figures: Record<'SIGKILL' | 'SIGTERM', number[]> = { SIGKILL: [], SIGTERM: [] };
  const at: { signal: 'SIGKILL' | 'SIGTERM'; when: number }[] = [];
  try {
    await load.acknowledged(60);
    for (let round = 0; round < TAKEOVER_ROUNDS; round++) {
      for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
        const victim = cluster.instances[(round * 2 + (signal === 'SIGKILL' ? 1 : 2)) % 3];
        at.push({ signal, when: Date.now() });
        await victim.kill(signal);
        await load.acknowledged(load.acks.length + 60);
        await victim.start();
        await load.acknowledged(load.acks.length + 30);
      }
    }
  } finally {
    await load.stop();
  }
  // Notifications of the last appends may still be under way: waited for, up to 60 s.
  await until(
    () => stream.seen.length,
    (n) => n >= load.acks.length,
    60_000,
    'notifications',
  ).catch(() => undefined);
  for (const { signal, when } of at) figures[signal].push(Math.max(0, ...ackToNotification(load.acks, stream.seen, when - 1000, when)));
  stream.close();
  await cluster.stop();
  const show = (xs: number[]) => `${xs.map((x) => fmt(x)).join(', ')} ms (median ${fmt(median(xs))})`;
  return `ack → notification for appends acknowledged in the second before: kill -9 ${show(figures.SIGKILL)}; SIGTERM ${show(figures.SIGTERM)}`;
}

async function main(): Promise<void> {
  const pg = await ThrowawayPostgres.start();
  const redis = await ThrowawayRedis.start();
  try {
    for (const scheduler of SCHEDULERS) {
      const schedulerEnv: Record<string, string> = scheduler === 'bullmq' ? { REDIS_URL: redis.url } : {};
      console.log(`\n== ${scheduler} lanes (${scheduler === 'bullmq' ? 'Redis' : 'no Redis'}), one PostgreSQL ==`);
      if (PHASES.has('webhooks')) for (const n of [1, 3]) console.log(`webhooks, ${await webhookThroughput(pg, schedulerEnv, n)}`);
      if (PHASES.has('takeover')) console.log(`takeover, 3 instances: ${await takeover(pg, schedulerEnv)}`);
      await redis.flushAll();
    }
  } finally {
    await redis.stop();
    await pg.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
