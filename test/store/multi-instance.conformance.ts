import { RawJson } from '../../src/common/raw-json';
import { laneMachinery } from '../support/lane-machinery';
import { toStoredSettings } from '../../src/notifications/log/notification-settings';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';
import { WebhookDelivery } from '../../src/store/webhook-records';
import type { StoreHarness } from './store-fixtures';
import { rawAll, req, tenant } from './store-fixtures';
import { elapse } from '../support/wait';

/** A statement straight on the storage: only to plant rows an older release could have left. */
async function rawRun(store: Store, sql: string, params: unknown[]): Promise<void> {
  if (store.kind === 'postgres') {
    let i = 0;
    await (store as PostgresStore).pool.query(
      sql.replace(/\?/g, () => `$${++i}`),
      params,
    );
  } else {
    (store as SqliteStore).db.prepare(sql).run(...params);
  }
}

const yieldTurn = () => new Promise((r) => setImmediate(r));

/**
 * Several instances over one storage (issue 23): the webhook head rule and the lane inbox, each
 * raced from several store instances (PostgreSQL: a pool each, READ COMMITTED; SQLite: a
 * connection and writer thread each on one file, WAL). Part of testEventStore.
 */
export function describeMultiInstanceStore(current: () => Store, harness: StoreHarness, extra: Store[]): void {
  let store: Store;
  beforeEach(() => {
    store = current();
  });

  describe('several instances over one storage', () => {
    it('keeps one head per webhook key, delivered in order, when instances enqueue and complete at once', async () => {
      const t = 'wh-race';
      const keys = ['a', 'b', 'c'];
      const rounds = 80;
      const notify = toStoredSettings({ webhookUrl: 'https://x.example/hook', isolated: false, sse: false });
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p',
        name: 'raced',
        version: { tenantId: t, versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
        ...notify,
      });
      const instances = [store, await harness.sameStorage(store), await harness.sameStorage(store)];
      extra.push(...instances.slice(1));
      for (const k of keys) await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v', key: k }, 1); // the lanes' rows

      // Notifications: one change per key per round, logged by lane runs of one instance.
      let produced = false;
      const produce = async () => {
        const at = new Map(keys.map((k) => [k, 0]));
        for (let r = 0; r < rounds; r++) {
          await Promise.all(
            keys.map(async (k, i) => {
              const position = r * keys.length + i + 1;
              const change = {
                position,
                aggregateId: `o-${k}`,
                aggregateType: 'o',
                version: r + 1,
                timestamp: position,
                state: `{"r":${r}}`,
              };
              const ok = await store.lanes.runs.applied(
                { tenantId: t, versionId: 'v', key: k },
                {
                  state: '{}',
                  fromPosition: at.get(k)!,
                  appliedPosition: position,
                  updatedAt: 1,
                  notify: { projectionId: 'p', changes: [change] },
                },
              );
              expect(ok).toBe(true);
              at.set(k, position);
            }),
          );
          if (r % 4 === 0) await yieldTurn();
        }
        produced = true;
      };
      // Every instance turns notifications into deliveries, a few at a time (many transactions to race).
      const enqueue = async (s: Store) => {
        for (;;) {
          const done = produced;
          const n = await s.webhooks.enqueue(t, 'p', 2, Date.now());
          if (n === 0 && done) return;
          if (n === 0) await yieldTurn();
        }
      };
      // Every instance sends what is due: claim, then mark delivered (the receiver said 2xx).
      const order = new Map<string, number[]>(keys.map((k) => [k, []]));
      let started = 0;
      let sending = 0;
      let stop = false;
      const send = async (s: Store, d: WebhookDelivery) => {
        // Counted before the claim: a claim commits (the delivery no longer due) before its answer arrives here.
        started++;
        sending++;
        try {
          if (!(await s.webhooks.claim(d, Date.now() + 600_000))) return;
          order.get(d.stateKey)!.push(d.sequence);
          await s.webhooks.delivered(d, Date.now());
        } finally {
          sending--;
        }
      };
      const complete = async (s: Store) => {
        while (!stop) {
          const due = await s.webhooks.dueOfTenants([t], Date.now(), 10);
          if (due.length === 0) await yieldTurn();
          else await Promise.all(due.map((d) => send(s, d)));
        }
      };
      // Meanwhile: no committed state may show a key whose deliveries wait with no head, or a key with two heads.
      const headless: string[] = [];
      const twoHeads: string[] = [];
      const watch = async () => {
        while (!stop) {
          for (const k of await store.webhooks.headlessKeys(10)) headless.push(`${k.stateKey}#${k.sequence}`);
          const heads = await rawAll<{ state_key: string; n: number }>(
            store,
            "SELECT state_key, count(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND status = 'pending' GROUP BY state_key HAVING count(*) > 1",
            [t],
          );
          for (const h of heads) twoHeads.push(`${h.state_key}: ${h.n}`);
          await yieldTurn();
        }
      };
      const completers = instances.map(complete);
      const watcher = watch();
      await Promise.all([produce(), ...instances.map(enqueue)]);
      // Everything is enqueued. Done when no delivery is being sent, none started meanwhile, and none is due:
      // then nothing can make another head (all delivered, or a key stuck for good).
      for (;;) {
        const before = started;
        const idle = sending === 0;
        const due = await store.webhooks.dueOfTenants([t], Date.now(), 1);
        if (idle && due.length === 0 && started === before && sending === 0) break;
        await yieldTurn();
      }
      stop = true;
      await Promise.all([...completers, watcher]);

      expect(twoHeads).toEqual([]);
      expect(headless).toEqual([]);
      expect(await store.webhooks.list(t, 'p', { status: 'pending', afterSequence: 0, limit: 10 })).toEqual([]); // nothing stuck
      const log = await store.notifications.read(t, 'p', 0, 10_000);
      expect(log).toHaveLength(rounds * keys.length);
      for (const k of keys) {
        const all = log.filter((n) => n.stateKey === k).map((n) => n.sequence);
        expect(order.get(k)).toEqual(all); // each once, in sequence order
      }
      expect(await store.webhooks.headlessKeys(10)).toEqual([]);
    }, 120_000);

    it('repairs a key whose deliveries wait with no head, once, whoever sweeps', async () => {
      const t = 'wh-repair';
      const notify = toStoredSettings({ webhookUrl: 'https://x.example/hook', isolated: false, sse: false });
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p',
        name: 'repaired',
        version: { tenantId: t, versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
        ...notify,
      });
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v', key: 'k' }, 1);
      const change = (position: number) => ({
        position,
        aggregateId: 'o',
        aggregateType: 'o',
        version: position,
        timestamp: 1,
        state: '{}',
      });
      await store.lanes.runs.applied(
        { tenantId: t, versionId: 'v', key: 'k' },
        {
          state: '{}',
          fromPosition: 0,
          appliedPosition: 3,
          updatedAt: 1,
          notify: { projectionId: 'p', changes: [1, 2, 3].map(change) },
        },
      );
      expect(await store.webhooks.enqueue(t, 'p', 10, 1000)).toBe(3);
      expect(await store.webhooks.headlessKeys(10)).toEqual([]);
      // What the race of issue 23 left: the head delivered, the next ones waiting behind nothing.
      await rawRun(store, "UPDATE webhook_deliveries SET status = 'delivered' WHERE tenant_id = ? AND sequence = 1", [t]);
      expect(await store.webhooks.dueOfTenants([t], 2000, 10)).toEqual([]);
      const found = await store.webhooks.headlessKeys(10);
      expect(found).toEqual([{ tenantId: t, projectionId: 'p', stateKey: 'k', sequence: 2 }]);
      const other = await harness.sameStorage(store);
      extra.push(other);
      // Two instances' sweeps at once: one repairs it.
      const repaired = await Promise.all([store.webhooks.repairHead(found[0]), other.webhooks.repairHead(found[0])]);
      expect(repaired.filter(Boolean)).toHaveLength(1);
      expect((await store.webhooks.dueOfTenants([t], 2000, 10)).map((d) => d.sequence)).toEqual([2]);
      expect(await store.webhooks.headlessKeys(10)).toEqual([]);
      expect(await store.webhooks.repairHead(found[0])).toBe(false);
    });

    it('consumes a lane inbox row once: a second router’s copy of a row the lane applied is never stored', async () => {
      const t = await tenant(store, 'inbox-once');
      await store.events.appendMany([1, 2, 3].map((i) => req(t, `o-${i}`)));
      const v = { tenantId: t, versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 };
      await store.projections.deploy({ tenantId: t, projectionId: 'p', name: 'once', version: v });
      const other = await harness.sameStorage(store);
      extra.push(other);
      const items = [1, 2, 3].map((position) => ({ key: 'k', position }));
      // Instance A routes and its lane applies everything; instance B's router, which read the log at the
      // same time, stores its pass only now.
      expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v' }, items, 3)).toBe(true);
      const work = (await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v', key: 'k' }, 10))!;
      expect(work.events.map((e) => e.position)).toEqual([1, 2, 3]);
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v', key: 'k' },
          { state: '{"n":3}', fromPosition: 0, appliedPosition: 3, updatedAt: 1 },
        ),
      ).toBe(true);
      expect(await other.lanes.inbox.route({ tenantId: t, versionId: 'v' }, items, 3)).toBe(true);
      expect(await store.lanes.reads.lag({ tenantId: t, versionId: 'v' })).toEqual({
        inboxDepth: 0,
        heldLanes: 0,
        laneCount: 1,
        oldestUnapplied: null,
      });
      expect(await store.lanes.sweep.purgeSpent({ tenantId: t, versionId: 'v' })).toBe(0); // nothing was stored again
      expect((await store.lanes.sweep.sweepCandidates()).live.find((c) => c.version.versionId === 'v')?.hasInbox ?? false).toBe(false);
      const [g] = (await store.lanes.gauges.versionGauges()).filter((x) => x.versionId === 'v');
      expect(g).toMatchObject({ inboxRows: 0, appliedPosition: 3, oldestUnappliedAt: null });

      // Spent rows an older release left are not lag, and the sweep's purge removes them.
      await rawRun(store, 'INSERT INTO lane_inbox (tenant_id, version_id, state_key, position) VALUES (?, ?, ?, ?)', [t, 'v', 'k', 2]);
      expect((await store.lanes.reads.lag({ tenantId: t, versionId: 'v' })).inboxDepth).toBe(0);
      expect((await store.lanes.gauges.versionGauges()).find((x) => x.versionId === 'v')).toMatchObject({
        inboxRows: 0,
        appliedPosition: 3,
      });
      expect(await other.lanes.sweep.purgeSpent({ tenantId: t, versionId: 'v' })).toBe(1);
      expect((await store.lanes.sweep.sweepCandidates()).live.find((c) => c.version.versionId === 'v')?.hasInbox ?? false).toBe(false);
    });

    if (harness.concurrentInstances) {
      it('stores no spent inbox row when a router writes while a lane run on another instance is committing', async () => {
        const t = await tenant(store, 'inbox-commit');
        await store.events.appendMany([1, 2, 3].map((i) => req(t, `o-${i}`)));
        const v = { tenantId: t, versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 };
        await store.projections.deploy({ tenantId: t, projectionId: 'p', name: 'commit', version: v });
        const other = await harness.sameStorage(store);
        extra.push(other);
        const items = [1, 2, 3].map((position) => ({ key: 'k', position }));
        expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v' }, items, 3)).toBe(true);
        // A lane run's write, held open between its statements and its commit (READ COMMITTED: its new
        // position is not visible to another transaction yet).
        const pool = (store as PostgresStore).pool;
        const run = await pool.connect();
        try {
          await run.query('BEGIN');
          await run.query(
            "UPDATE lanes SET state = '{}', applied_position = 3 WHERE tenant_id = $1 AND version_id = 'v' AND state_key = 'k'",
            [t],
          );
          await run.query("DELETE FROM lane_inbox WHERE tenant_id = $1 AND version_id = 'v' AND state_key = 'k' AND position <= 3", [t]);
          // Meanwhile the other instance's router stores its pass over the same events.
          let routed = false;
          const routing = other.lanes.inbox.route({ tenantId: t, versionId: 'v' }, items, 3).finally(() => (routed = true));
          const waiting = async () =>
            (await pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rowCount! >
            0;
          while (!routed && !(await waiting())) await yieldTurn();
          await run.query('COMMIT');
          expect(await routing).toBe(true);
        } finally {
          run.release();
        }
        expect(await store.lanes.reads.lag({ tenantId: t, versionId: 'v' })).toEqual({
          inboxDepth: 0,
          heldLanes: 0,
          laneCount: 1,
          oldestUnapplied: null,
        });
        expect(await store.lanes.sweep.purgeSpent({ tenantId: t, versionId: 'v' })).toBe(0);
      });
    }

    it('reaches lag 0 with no spent inbox row when two instances’ routers and lanes race over one tenant', async () => {
      const t = await tenant(store, 'two-routers');
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p',
        name: 'raced',
        version: { tenantId: t, versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
      });
      const other = await harness.sameStorage(store);
      extra.push(other);
      // The tenant's code, scripted: the key is the event's aggregate, the state counts the events applied. The
      // second instance resolves keys a little later than the first (a slower or busier machine), so its
      // router's pass often lands after the first's lanes applied the same events.
      const runtime = (lateMs: number) => ({
        resolveKeys: async (_t: string, _v: string, _c: string, events: { aggregateId: string }[]) => {
          if (lateMs) await elapse(Math.random() * lateMs, 'a router pass that lands late');
          return events.map((e) => e.aggregateId);
        },
        apply: async (_t: string, _v: string, _c: string, groups: { state: RawJson | null; events: unknown[] }[]) =>
          groups.map((g) => ({
            ok: true as const,
            states: g.events.map((_, i) => JSON.stringify({ n: (g.state ? JSON.parse(g.state.text).n : 0) + i + 1 })),
          })),
        unload: async () => undefined,
      });
      const engines = [store, other].map(
        (s, i) =>
          laneMachinery({
            log: s.events,
            catalog: s.projections,
            lanes: s.lanes,
            runtime: runtime(i * 80),
            engine: { sweepMs: 600_000 }, // no sweep: its purge would hide a spent row routing stored
            runner: { batch: 100, backoffMs: [10], lease: { owner: `instance-${i}`, ttlMs: 15_000 } },
          }).engine,
      );
      for (const e of engines) await e.start();
      const until = async (ok: () => Promise<boolean>, ms: number) => {
        for (const end = Date.now() + ms; Date.now() < end && !(await ok());) await elapse(10, 'poll interval');
      };
      // Rounds of appends, each on keys of its own (a spent row left at a round's end is never removed by a
      // later run of its lane), each appended group woken on both instances (as cross-instance wake-ups do).
      const rounds = 10;
      const keys = 4;
      const perKey = 6;
      try {
        for (let round = 0; round < rounds; round++) {
          for (let i = 0; i < keys * perKey; i += 3) {
            await store.events.appendMany([0, 1, 2].map((j) => req(t, `r${round}-k${(i + j) % keys}`)));
            for (const e of engines) e.appended(t);
            await elapse(5, "a paced load, as the issue's clients sent it");
          }
          const applied = async () =>
            (
              await Promise.all(
                [...Array(keys).keys()].map((k) => store.lanes.reads.getLane({ tenantId: t, versionId: 'v', key: `r${round}-k${k}` })),
              )
            ).every((l) => l?.state === `{"n":${perKey}}`);
          await until(applied, 30_000);
          expect(await applied()).toBe(true);
        }
        const settled = async () => {
          const [l, v] = await Promise.all([store.lanes.reads.lag({ tenantId: t, versionId: 'v' }), store.projections.getVersion(t, 'v')]);
          return l.inboxDepth === 0 && v?.routedPosition === rounds * keys * perKey;
        };
        await until(settled, 10_000);
        expect(await store.lanes.reads.lag({ tenantId: t, versionId: 'v' })).toEqual({
          inboxDepth: 0,
          heldLanes: 0,
          laneCount: rounds * keys,
          oldestUnapplied: null,
        });
        // Every event applied once (the states count them).
        for (const l of await store.lanes.reads.listLanes({ tenantId: t, versionId: 'v' }, { afterKey: '', limit: 100 }))
          expect(l.state).toBe(`{"n":${perKey}}`);
      } finally {
        for (const e of engines) await e.close();
      }
      // No row at or below its lane's position remains (whatever the lanes are at now).
      expect(await store.lanes.sweep.purgeSpent({ tenantId: t, versionId: 'v' })).toBe(0);
      expect((await store.lanes.sweep.sweepCandidates()).live.find((c) => c.version.versionId === 'v')?.hasInbox ?? false).toBe(false);
    }, 120_000);
  });
}
