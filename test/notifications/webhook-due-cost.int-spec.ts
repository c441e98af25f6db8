import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { toStoredSettings } from '../../src/notifications/log/notification-settings';
import { PostgresSqlRunner } from '../../src/store/postgres/postgres-sql-runner';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqlRunner } from '../../src/store/sql-runner';
import { SqlWebhookRepository } from '../../src/store/sql-webhook-repository';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';
import { ThrowawayPostgres } from '../support/throwaway-postgres';

jest.setTimeout(180_000);

let pg: ThrowawayPostgres | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await pg?.stop();
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
}, 60_000);

async function openStore(
  kind: 'sqlite' | 'postgres',
): Promise<{ store: Store; runner: SqlRunner; explain: (sql: string, params: unknown[]) => Promise<number | string[]> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-due-'));
    dirs.push(dir);
    const s = new SqliteStore({ file: path.join(dir, 'events.sqlite') });
    await s.migrate();
    const explain = async (sql: string, params: unknown[]) =>
      (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
    return { store: s, runner: s.sqlRunner, explain };
  }
  pg ??= await ThrowawayPostgres.start();
  const s = new PostgresStore({ connectionString: await pg.createDatabase() });
  await s.migrate();
  const runner = new PostgresSqlRunner(s.pool);
  /** Rows the plan's nodes produced or filtered away, all loops: the work the statement did. */
  const explain = async (sql: string, params: unknown[]) => {
    let i = 0;
    const { rows } = await s.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.replace(/\?/g, () => `$${++i}`)}`, params);
    let touched = 0;
    const walk = (node: any) => {
      touched +=
        (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
        (node['Rows Removed by Filter'] ?? 0) +
        (node['Rows Removed by Index Recheck'] ?? 0);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    return touched;
  };
  return { store: s, runner, explain };
}

/** Records the statements a repository runs (to explain the one under test), passing them on. */
class RecordingRunner implements SqlRunner {
  last: { sql: string; params: unknown[] } | null = null;
  constructor(private readonly inner: SqlRunner) {}
  get dialect() {
    return this.inner.dialect;
  }
  all<T>(sql: string, params: unknown[]) {
    this.last = { sql, params };
    return this.inner.all<T>(sql, params);
  }
  run(sql: string, params: unknown[]) {
    return this.inner.run(sql, params);
  }
  batch(statements: Parameters<SqlRunner['batch']>[0]) {
    return this.inner.batch(statements);
  }
}

const TENANT = 't1';
const BACKLOG = 4_000;

/** `count` state changes of one key (one lane run each 1,000), logged as notifications and turned into deliveries. */
async function changesOfKey(store: Store, key: string, from: number, count: number) {
  await store.lanes.runs.laneWork({ tenantId: TENANT, versionId: 'v1', key }, 1);
  for (let c = 0; c < count; c += 1_000) {
    const changes = Array.from({ length: Math.min(1_000, count - c) }, (_, i) => {
      const position = from + c + i + 1;
      return { position, aggregateId: `order-${position}`, aggregateType: 'order', version: 1, timestamp: 1, state: `{"n":${position}}` };
    });
    const last = changes[changes.length - 1].position;
    const ok = await store.lanes.runs.applied(
      { tenantId: TENANT, versionId: 'v1', key },
      {
        state: '{}',
        fromPosition: c === 0 ? 0 : from + c,
        appliedPosition: last,
        updatedAt: 1,
        notify: { projectionId: 'p1', changes },
      },
    );
    expect(ok).toBe(true);
  }
  while ((await store.webhooks.enqueue(TENANT, 'p1', 500, 1)) > 0);
}

describe.each(['sqlite', 'postgres'] as const)('finding due webhook deliveries on %s', (kind) => {
  it('costs the same with 4,000 deliveries waiting behind a failing head as with none, and keeps each key in order', async () => {
    const { store, runner, explain } = await openStore(kind);
    try {
      await store.tenants.createTenant({ tenantId: TENANT, name: TENANT, createdAt: 1 });
      const version = { versionId: 'v1', projectionId: 'p1', tenantId: TENANT, className: 'C', targetPosition: 0, createdAt: 1 };
      await store.projections.deploy({
        tenantId: TENANT,
        projectionId: 'p1',
        name: 'n',
        version,
        ...toStoredSettings({ webhookUrl: 'http://x', isolated: false, sse: false }),
      });
      const recording = new RecordingRunner(runner);
      const repo = new SqlWebhookRepository(recording);

      // The head of key 'slow' fails and is retried in an hour; 3,999 wait behind it.
      await changesOfKey(store, 'slow', 0, BACKLOG);
      const [head] = await repo.dueOfTenants([TENANT], 10, 10);
      expect(head).toMatchObject({ stateKey: 'slow', sequence: 1, status: 'pending' });
      expect(await repo.claim(head, 20)).toBe(true);
      await repo.attemptFailed({ ...head, nextAttemptAt: 20 }, 'HTTP 500', 3_600_000, 10);
      // Another key with one delivery due.
      await changesOfKey(store, 'calm', BACKLOG, 1);

      const due = await repo.dueOfTenants([TENANT], 1_000, 10);
      expect(due.map((d) => [d.stateKey, d.sequence])).toEqual([['calm', BACKLOG + 1]]);
      // Every waiting one is listed as pending (the API's statuses are unchanged).
      expect(await store.webhooks.list(TENANT, 'p1', { status: 'pending', afterSequence: 0, limit: 5_000 })).toHaveLength(BACKLOG + 1);

      const plan = await explain(recording.last!.sql, recording.last!.params);
      console.log(`${kind}: the due query with ${BACKLOG} waiting: ${JSON.stringify(plan)}`);
      if (typeof plan === 'number') {
        // PostgreSQL: rows the plan touched (produced or filtered away), not the backlog.
        expect(plan).toBeLessThan(50);
      } else {
        // SQLite: a range of the by-tenant index on all three terms, stopping at the limit, and no per-row subquery.
        expect(plan.some((d) => /webhook_deliveries_by_tenant \(status=\? AND tenant_id=\? AND next_attempt_at<\?\)/.test(d))).toBe(true);
        expect(plan.filter((d) => /SUBQUERY|SCAN/.test(d))).toEqual([]);
      }

      // The head dead-lettered: the next of its key becomes due, in sequence order.
      const [again] = (await repo.dueOfTenants([TENANT], 4_000_000, 10)).filter((d) => d.stateKey === 'slow');
      expect(again.sequence).toBe(1);
      expect(await repo.claim(again, 4_000_010)).toBe(true);
      await repo.attemptFailed({ ...again, nextAttemptAt: 4_000_010 }, 'HTTP 500', null, 4_000_000);
      const next = (await repo.dueOfTenants([TENANT], 4_000_000, 10)).filter((d) => d.stateKey === 'slow');
      expect(next.map((d) => d.sequence)).toEqual([2]);
      await repo.delivered(next[0], 4_000_001);
      expect((await repo.dueOfTenants([TENANT], 4_000_000, 10)).filter((d) => d.stateKey === 'slow').map((d) => d.sequence)).toEqual([3]);

      // A replayed dead delivery is earlier than its key's head: it becomes the head again, the key waits for it.
      expect(await repo.replay(TENANT, 'p1', 1, 4_000_002)).toBe(1);
      expect((await repo.dueOfTenants([TENANT], 4_000_003, 10)).filter((d) => d.stateKey === 'slow').map((d) => d.sequence)).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});
