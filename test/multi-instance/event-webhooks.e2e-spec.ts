import { Pool } from 'pg';
import { Cluster, range } from '../support/multi-instance';
import { Client, clientFor, newTenant } from '../support/service-harness';
import { envFor, stopBackends } from '../support/store-backends';
import { until } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';
import { elapse } from '../support/wait';

/**
 * Event webhooks on two instances of the built service over one PostgreSQL: every subscription is
 * claimed in the store by one instance at a time, so each event reaches each receiver once, in
 * position order, while appends arrive through both instances; then one instance is killed (-9)
 * mid-delivery and the other takes its subscriptions over once their claims lapse
 * (WEBHOOK_TIMEOUT_MS + 5 s), repeating at most the one attempt that was in flight.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const SUBSCRIPTIONS = 3;
const TIMEOUT_MS = 2_000;
/** A claim lapses WEBHOOK_TIMEOUT_MS + 5 s after it was last extended; the poll takes it within WEBHOOK_POLL_MS. */
const CLAIM_MS = TIMEOUT_MS + 5_000;

describe('event webhooks on two instances (PostgreSQL)', () => {
  let cluster: Cluster;
  let t: Client;
  let db: Pool;
  const receivers: WebhookReceiver[] = [];
  const via = (i: number) => clientFor(cluster.instances[i].url, t.key, t.tenantId);

  /** Which instances (by pid) hold claims now: the owner is `host:pid:random`. */
  async function claimHolders(): Promise<number[]> {
    const { rows } = await db.query<{ claim_owner: string }>(
      'SELECT claim_owner FROM event_webhooks WHERE tenant_id = $1 AND claim_owner IS NOT NULL AND claim_until > $2',
      [t.tenantId, Date.now()],
    );
    return rows.map((r) => Number(r.claim_owner.split(':')[1]));
  }

  /** Events appended so far (the receivers' sequences run 1..appended). */
  let appended = 0;

  /**
   * Appends `n` events at a time through `instance` (woken first, it usually wins the claims) until `instance`
   * is seen holding a claim while each receiver has had some of the batch and not all of it (mid-delivery).
   * Which instance wins a claim is a race, so a batch may be delivered entirely by the other: then another batch.
   */
  async function holdingMidDelivery(instance: number, n: number): Promise<void> {
    const pid = cluster.instances[instance].child.pid!;
    for (let round = 1; ; round++) {
      const before = receivers.map((rx) => new Set(rx.sequences()).size);
      await appendThrough([instance], n);
      const seen = await until(
        async () => ({ got: receivers.map((rx) => new Set(rx.sequences()).size), holders: await claimHolders() }),
        (x) =>
          x.got.every((g) => g >= appended) ||
          (x.holders.includes(pid) && x.got.every((g, i) => g - before[i] >= 5) && x.got.some((g) => g < appended - n / 5)),
        60_000,
        `deliveries under way, instance ${instance} holding a subscription`,
      );
      if (seen.holders.includes(pid) && !seen.got.every((g) => g >= appended)) return;
      if (round === 5) throw new Error(`instance ${instance} held no subscription mid-delivery in ${round} batches`);
    }
  }

  async function appendThrough(instances: number[], n: number): Promise<number[]> {
    const positions: number[] = [];
    // Two writers at a time, alternating instances: positions interleave between them.
    for (let i = 0; i < n; i += 2) {
      const batch = await Promise.all(
        [i, i + 1]
          .filter((k) => k < n)
          .map((k) =>
            via(instances[k % instances.length]).post('/events', { aggregateId: `acct-${k % 7}`, eventType: 'Moved', data: { k } }),
          ),
      );
      for (const r of batch) {
        if (r.status !== 201) throw new Error(`append failed: ${r.status} ${JSON.stringify(r.body)}`);
        positions.push(r.body.position);
      }
    }
    appended += positions.length;
    return positions;
  }

  beforeAll(async () => {
    const env = await envFor('postgres');
    db = new Pool({ connectionString: env.DATABASE_URL, max: 2 });
    cluster = await Cluster.start(2, {
      ...env,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_RETRY_BACKOFF_MS: '100,200,500',
      RUNTIME_COMPILER_HOSTS: '1',
    });
    t = await newTenant(cluster.instances[0].url, 'ewh-multi');
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const rx = await new WebhookReceiver().start();
      const made = await via(i % 2).post('/event-webhooks', { url: rx.url, afterPosition: 0, name: `sub-${i}` });
      expect(made.status).toBe(201);
      rx.secrets = [made.body.secret];
      receivers.push(rx);
    }
  });

  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await db?.end();
    await cluster?.stop();
  });

  it('delivers each event once per subscription, in order, while both instances append and poll', async () => {
    // Who delivers, sampled while it happens (each claim is one instance's).
    const seen = new Set<number>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const pid of await claimHolders()) seen.add(pid);
        await elapse(20, 'sampling period of the claim holders');
      }
    })();
    for (const rx of receivers) rx.delayMs = 5;
    const positions = await appendThrough([0, 1], 200);
    expect([...positions].sort((a, b) => a - b)).toEqual(range(1, 200));
    for (const rx of receivers) {
      await until(
        () => rx.sequences().length,
        (n) => n >= 200,
        60_000,
        'every event delivered',
      );
    }
    sampling = false;
    await sampler;
    // Which instance wins a claim is a race (the appending one is woken first, the other polls): either may hold them
    // all. Holding two is what the store forbids, and what the receivers below would show as repeats.
    expect(seen.size).toBeGreaterThanOrEqual(1);
    // A moment for a duplicate to show, should one be on its way (none may).
    await elapse(500, 'a moment for a duplicate to show, should one be on its way');
    for (const rx of receivers) {
      expect(rx.sequences()).toEqual(range(1, 200));
      expect(rx.rejectedSignatures).toBe(0);
    }
  });

  it('takes over the subscriptions of a killed instance within seconds, repeating at most the attempt in flight', async () => {
    for (const rx of receivers) rx.delayMs = 30; // slow receivers (~5 s for 150 events): the kill lands mid-delivery
    // Kill the second instance while it holds a subscription, mid-way.
    await holdingMidDelivery(1, 150);
    const killedAt = Date.now();
    await cluster.instances[1].kill('SIGKILL');
    await appendThrough([0], 50);
    const last = appended;
    for (const rx of receivers) {
      await until(
        () => new Set(rx.sequences()).size,
        (n) => n >= last,
        60_000,
        'every event delivered after the kill',
      );
    }
    await elapse(500, 'a moment for a duplicate to show, should one be on its way');
    for (const rx of receivers) {
      const seqs = rx.sequences();
      // In order, with nothing missing: the first sight of each position, in arrival order, is 1..400.
      const firsts = seqs.filter((s, i) => seqs.indexOf(s) === i);
      expect(firsts).toEqual(range(1, last));
      // A repeat only for an attempt the killed instance had in flight: accepted before the kill, again after it.
      const repeats = seqs.filter((s, i) => seqs.indexOf(s) !== i);
      expect(repeats.length).toBeLessThanOrEqual(1);
      for (const s of repeats) {
        const at = rx.accepted.filter((a) => a.sequence === s).map((a) => a.at);
        expect(at[0]).toBeLessThanOrEqual(killedAt + 100);
        expect(at[1]).toBeGreaterThan(killedAt);
      }
      // Ordered by arrival, a repeat is followed by the positions after it: order held across the takeover.
      const afterKill = rx.accepted.filter((a) => a.at > killedAt).map((a) => a.sequence);
      expect(afterKill).toEqual([...afterKill].sort((a, b) => a - b));
    }
    // The takeover came within a claim's life and a few polls of the kill.
    const resumedAt = Math.max(...receivers.map((rx) => rx.accepted.find((a) => a.at > killedAt + 50)?.at ?? Number.POSITIVE_INFINITY));
    expect(resumedAt - killedAt).toBeLessThan(CLAIM_MS + 5_000);
    const status = (await via(0).get('/event-webhooks')).body.eventWebhooks;
    expect(status.map((w: any) => [w.deliveredPosition, w.pendingEvents, w.deadDeliveries])).toEqual(
      Array.from({ length: SUBSCRIPTIONS }, () => [last, 0, 0]),
    );
    expect(cluster.errorLines()).toEqual([]);
  });

  it('hands its subscriptions over at once when an instance stops (SIGTERM lets its claims go)', async () => {
    await cluster.instances[1].start();
    await cluster.ready(1);
    // Slow receivers (150 events take each ~5 s), the appends through the instance that will stop, so that it
    // is woken first and holds the subscriptions while most of their events are still to be delivered.
    for (const rx of receivers) rx.delayMs = 30;
    const first = appended + 1;
    await holdingMidDelivery(0, 150);
    const stoppedAt = Date.now();
    expect(await cluster.instances[0].kill('SIGTERM')).toBe(0);
    const stopped = Date.now();
    const last = appended;
    for (const rx of receivers) {
      await until(
        () => new Set(rx.sequences()).size,
        (n) => n >= last,
        60_000,
        'every event delivered after the stop',
      );
    }
    for (const rx of receivers) {
      const seqs = rx.sequences().filter((s) => s >= first);
      // A stop loses nothing and repeats nothing: the attempts under way end before the claims go.
      expect(seqs).toEqual(range(first, last));
      // Taken over well before a claim could have lapsed (CLAIM_MS after the stop), when there was anything left.
      const firstAfter = rx.accepted.find((a) => a.at > stopped)?.at;
      if (firstAfter !== undefined) expect(firstAfter - stopped).toBeLessThan(CLAIM_MS - 2_000);
    }
    // At least one subscription had most of its events left at the stop: they came from the other instance.
    expect(receivers.some((rx) => rx.accepted.some((a) => a.at > stopped))).toBe(true);
    expect(stopped - stoppedAt).toBeLessThan(CLAIM_MS);
  });
});
