/**
 * Issue 24, item 1: does a 1 %-selective filter of GET /events read only what it returns? The query
 * plans of EventLog.readLog's shapes on both stores, over one tenant of EXPLAIN_EVENTS events (default
 * 200,000: 1 % of type `Rare`, 1 % of aggregates of type `rare`), with each page's time. PostgreSQL:
 * EXPLAIN (ANALYZE, BUFFERS) after ANALYZE; SQLite: EXPLAIN QUERY PLAN (it keeps no statistics).
 *
 *   npm run build && node dist/bench/event-log-explain.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { LogQuery } from '../src/store/event-log.port';
import { logQuerySql } from '../src/store/log-query-sql';
import { openStore } from '../src/store/store.factory';
import { Store } from '../src/store/store.port';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';

const EVENTS = Number(process.env.EXPLAIN_EVENTS ?? 200_000);

const QUERIES: [string, LogQuery][] = [
  ['eventType=Rare, forward', { direction: 'forward', afterPosition: EVENTS / 4, limit: 1000, eventTypes: ['Rare'] }],
  ['aggregateType=rare, forward', { direction: 'forward', afterPosition: EVENTS / 4, limit: 1000, aggregateTypes: ['rare'] }],
  ['eventType=Rare, backward', { direction: 'backward', beforePosition: (EVENTS * 3) / 4, limit: 1000, eventTypes: ['Rare'] }],
  ['eventType=Rare,Nope (two ranges merged)', { direction: 'forward', afterPosition: 0, limit: 1000, eventTypes: ['Rare', 'Nope'] }],
  [
    'eventType=Rare & aggregateType=account',
    { direction: 'forward', afterPosition: 0, limit: 1000, eventTypes: ['Rare'], aggregateTypes: ['account'] },
  ],
  ['no filter', { direction: 'forward', afterPosition: 0, limit: 1000 }],
];

async function seed(store: Store, tenantId: string): Promise<void> {
  await store.tenants.createTenant({ tenantId, name: tenantId, createdAt: Date.now() });
  for (let n = 0; n < EVENTS;) {
    const requests = [];
    for (let r = 0; r < 100 && n < EVENTS; r++) {
      const agg = n / 100;
      const type = agg % 100 === 42 ? 'rare' : 'account';
      const events = [];
      for (let k = 0; k < 100 && n < EVENTS; k++, n++) events.push({ eventType: n % 100 === 7 ? 'Rare' : 'MoneyDeposited', data: '{}' });
      requests.push({ tenantId, aggregateId: `${type}-${agg}`, aggregateType: type, inferredType: type, events });
    }
    await store.events.appendMany(requests);
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-explain-'));
  const sqlite = await openStore({ dataDir: dir, databaseUrl: undefined });
  await seed(sqlite, 't1');
  await sqlite.close();
  const file = fs.readdirSync(dir).find((f) => /\.(sqlite|db)$/.test(f))!;
  const db = new Database(path.join(dir, file), { readonly: true });
  for (const [name, q] of QUERIES) {
    const values: unknown[] = [];
    const sql = logQuerySql('t1', q, (v) => (values.push(v), '?'), 'sqlite');
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as { detail: string }[]).map((r) => r.detail);
    const t0 = process.hrtime.bigint();
    const rows = db.prepare(sql).all(...values).length;
    console.log(
      `SQLite  ${name}: ${rows} rows in ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms\n    ${plan.join('\n    ')}`,
    );
  }
  db.close();

  const pg = await ThrowawayPostgres.start();
  try {
    const url = await pg.createDatabase('explain');
    const store = await openStore({ dataDir: dir, databaseUrl: url });
    await seed(store, 't1');
    await store.close();
    const c = new Client({ connectionString: url });
    await c.connect();
    await c.query('ANALYZE events');
    for (const [name, q] of QUERIES) {
      const values: unknown[] = [];
      const sql = logQuerySql('t1', q, (v) => (values.push(v), `$${values.length}`), 'postgres');
      const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, values);
      console.log(`PostgreSQL  ${name}:\n    ${r.rows.map((x) => x['QUERY PLAN']).join('\n    ')}`);
    }
    await c.end();
  } finally {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
