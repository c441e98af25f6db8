/**
 * Issue 24 (benchmarks): export and import of an N-event tenant, events/s, SQLite → PostgreSQL as
 * the move docs/operations.md describes, and back. Baseline in the same run: a plain keyset read
 * of the same events (`SELECT * … ORDER BY position`, 1,000 a page) on each store, the floor any
 * export sits on.
 *
 * Store level (no HTTP: the service's routes add a spool to disk and the socket): the source is
 * seeded by importing a generated export file (N events of N/10 streams, 200-byte payloads), so
 * the seed itself is the first import figure.
 *
 *   npm run bench:tenant-transfer                 (N=20000)
 *   N=1000000 node dist/bench/tenant-transfer.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { PostgresStore } from '../src/store/postgres/postgres-store';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { Store } from '../src/store/store.port';
import { TenantExporter } from '../src/tenant-transfer/tenant-exporter';
import { TenantImporter } from '../src/tenant-transfer/tenant-importer';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { fmt } from './bench-util';

const N = Number(process.env.N ?? 20_000);
const STREAM_EVENTS = 10;

/** A generated export file: a tenant, its head, a key hash, N/10 streams of 10 events each. */
function writeSeed(file: string, tenantId: string): void {
  const fd = fs.openSync(file, 'w');
  const counts: Record<string, number> = {};
  let rows = 0;
  let buf = '';
  const row = (table: string, r: Record<string, unknown>) => {
    counts[table] = (counts[table] ?? 0) + 1;
    rows++;
    buf += JSON.stringify({ table, row: r }) + '\n';
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
  };
  const now = Date.now();
  buf +=
    JSON.stringify({
      format: 'eventstore-export',
      version: 1,
      tenantId,
      exportedAt: new Date().toISOString(),
      schemaVersion: 1,
      store: 'sqlite',
    }) + '\n';
  row('tenants', { tenant_id: tenantId, name: 'bench', created_at: now });
  row('tenant_heads', { tenant_id: tenantId, position: N });
  row('api_keys', {
    key_id: `k_${tenantId}`,
    tenant_id: tenantId,
    key_hash: randomUUID().replace(/-/g, '').repeat(2),
    created_at: now,
    revoked_at: null,
  });
  const streams = Math.ceil(N / STREAM_EVENTS);
  for (let s = 0; s < streams; s++)
    row('streams', {
      tenant_id: tenantId,
      aggregate_id: `acct-${s}`,
      aggregate_type: 'account',
      version: Math.min(STREAM_EVENTS, N - s * STREAM_EVENTS),
    });
  const pad = 'x'.repeat(150);
  for (let p = 1; p <= N; p++) {
    const s = Math.floor((p - 1) / STREAM_EVENTS);
    row('events', {
      tenant_id: tenantId,
      position: p,
      aggregate_id: `acct-${s}`,
      version: ((p - 1) % STREAM_EVENTS) + 1,
      event_id: randomUUID(),
      aggregate_type: 'account',
      event_type: 'Deposited',
      data: `{"amount":${p % 1000},"note":"${pad}"}`,
      metadata: '{"source":"bench"}',
      correlation_id: null,
      causation_id: null,
      created_at: now,
    });
  }
  buf += JSON.stringify({ end: true, rows, counts }) + '\n';
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; s: number }> {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { value, s: Number(process.hrtime.bigint() - t0) / 1e9 };
}

async function exportTo(store: Store, tenantId: string, file: string): Promise<void> {
  const fd = fs.openSync(file, 'w');
  try {
    for await (const chunk of await new TenantExporter(store).open(tenantId)) fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
}

/** The baseline: the tenant's events read in position order, 1,000 a page, nothing else done with them. */
async function rawRead(store: Store, tenantId: string): Promise<number> {
  let after = 0;
  let n = 0;
  for (;;) {
    const sql = 'SELECT * FROM events WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT 1000';
    const rows =
      store instanceof PostgresStore
        ? (await store.pool.query(sql, [tenantId, after])).rows
        : ((store as SqliteStore).db.prepare(sql.replace(/\$\d/g, '?')).all(tenantId, after) as { position: number }[]);
    n += rows.length;
    if (rows.length < 1000) return n;
    after = Number(rows[rows.length - 1].position);
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-transfer-'));
  const pg = await ThrowawayPostgres.start();
  const tenantId = randomUUID();
  const lines: string[] = [];
  const rate = (s: number) => `${fmt(N / s)} events/s (${fmt(s, 2)} s)`;
  try {
    const seed = path.join(dir, 'seed.ndjson');
    writeSeed(seed, tenantId);
    const sqlite = SqliteStore.inDataDir(path.join(dir, 'sqlite'));
    await sqlite.migrate();
    const postgres = new PostgresStore({ connectionString: await pg.createDatabase('bench') });
    await postgres.migrate();
    try {
      const seeded = await timed(() => new TenantImporter(sqlite).importFile(seed));
      lines.push(`import into SQLite (generated file)    ${rate(seeded.s)}`);
      const baseSqlite = await timed(() => rawRead(sqlite, tenantId));
      if (baseSqlite.value !== N) throw new Error(`read ${baseSqlite.value} events, expected ${N}`);
      lines.push(`baseline: raw keyset read, SQLite       ${rate(baseSqlite.s)}`);
      const fromSqlite = path.join(dir, 'from-sqlite.ndjson');
      const exported = await timed(() => exportTo(sqlite, tenantId, fromSqlite));
      lines.push(`export from SQLite                      ${rate(exported.s)}   ${fmt(fs.statSync(fromSqlite).size / 1e6, 1)} MB`);
      const imported = await timed(() => new TenantImporter(postgres).importFile(fromSqlite));
      lines.push(`import into PostgreSQL                  ${rate(imported.s)}`);
      const basePg = await timed(() => rawRead(postgres, tenantId));
      lines.push(`baseline: raw keyset read, PostgreSQL   ${rate(basePg.s)}`);
      const exportedPg = await timed(() => exportTo(postgres, tenantId, path.join(dir, 'from-pg.ndjson')));
      lines.push(`export from PostgreSQL                  ${rate(exportedPg.s)}`);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
    console.log(`tenant transfer, N=${fmt(N)} events (${N / STREAM_EVENTS} streams)\n${lines.join('\n')}`);
  } finally {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
