import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';
import { TenantExporter } from '../../src/tenant-transfer/tenant-exporter';
import { TenantImporter } from '../../src/tenant-transfer/tenant-importer';
import { TenantRemover } from '../../src/tenant-transfer/tenant-remover';
import { exportPlan } from '../../src/tenant-transfer/transfer-tables';
import { postgresServer, stopBackends } from '../support/store-backends';

/**
 * The store side of tenant transfer on both adapters: every tenant table is classified (exported
 * or derived), values are store-neutral (times as epoch ms, bytes as base64, text as stored) so a
 * SQLite → PostgreSQL → SQLite round trip gives the same rows, an import is one transaction, and
 * two imports of one tenant at once store it once.
 */
jest.setTimeout(120_000);
afterAll(() => stopBackends(), 60_000);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'es-transfer-int-'));
  dirs.push(d);
  return d;
}

async function sqlite(): Promise<SqliteStore> {
  const s = SqliteStore.inDataDir(tmp());
  await s.migrate();
  return s;
}

async function postgres(): Promise<PostgresStore> {
  const s = new PostgresStore({ connectionString: await (await postgresServer()).createDatabase('transfer'), poolSize: 4 });
  await s.migrate();
  return s;
}

/** An export file written by hand: odd text, bytes, times, nulls. */
function exportFile(tenantId: string, opts: { cutAfter?: number } = {}): string {
  const assembly = randomBytes(3000).toString('base64');
  const rows: { table: string; row: Record<string, unknown> }[] = [
    { table: 'tenants', row: { tenant_id: tenantId, name: 'ünïcode 日本', created_at: 1_700_000_000_123 } },
    { table: 'tenant_heads', row: { tenant_id: tenantId, position: 3 } },
    {
      table: 'api_keys',
      row: { key_id: `k-${tenantId}`, tenant_id: tenantId, key_hash: randomUUID(), created_at: 1_700_000_000_456, revoked_at: null },
    },
    ...[1, 2, 3].map((p) => ({
      table: 'events',
      row: {
        tenant_id: tenantId,
        position: p,
        aggregate_id: 'a/é 1',
        version: p,
        event_id: randomUUID(),
        aggregate_type: 'thing',
        event_type: 'Happened',
        data: `{"n":1e400,"s":"\\u0000 \\ud83d\\ude00","p":${p}}`,
        metadata: p === 2 ? null : '{ "spaced" : true }',
        correlation_id: p === 3 ? 'corr' : null,
        causation_id: null,
        created_at: 1_700_000_001_000 + p,
        tags: p === 1 ? '["student:\u00e9l\u00e8ve","course:7"]' : null,
      },
    })),
    { table: 'streams', row: { tenant_id: tenantId, aggregate_id: 'a/é 1', aggregate_type: 'thing', version: 3 } },
    {
      table: 'uploads',
      row: {
        upload_id: 'u1',
        tenant_id: tenantId,
        kind: 'reducer',
        status: 'compiled',
        sources: '[]',
        meta: '{}',
        discovered: '[]',
        compilation_error: null,
        assembly,
        assembly_sha256: 'x',
        created_at: 1_700_000_002_000,
        compiled_at: 1_700_000_003_000,
        claim_owner: 'some-instance',
        claim_until: 99,
      },
    },
  ];
  const kept = opts.cutAfter === undefined ? rows : rows.slice(0, opts.cutAfter);
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.table] = (counts[r.table] ?? 0) + 1;
  const header = {
    format: 'eventstore-export',
    version: 1,
    tenantId,
    exportedAt: new Date().toISOString(),
    schemaVersion: 1,
    store: 'sqlite',
  };
  const lines = [header, ...kept, ...(opts.cutAfter === undefined ? [{ end: true, rows: rows.length, counts }] : [])];
  const file = path.join(tmp(), 'export.ndjson');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

async function exportText(store: Store, tenantId: string): Promise<string> {
  let text = '';
  for await (const c of await new TenantExporter(store).open(tenantId)) text += c;
  return text;
}

const rowsOf = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l));

async function tenantRows(store: Store, tenantId: string): Promise<number> {
  let n = 0;
  for await (const page of store.transfer.exportRows(tenantId, await store.transfer.tenantTables())) n += page.length;
  return n;
}

describe('tenant transfer in the stores', () => {
  let lite: SqliteStore;
  let pg: PostgresStore;
  beforeAll(async () => {
    lite = await sqlite();
    pg = await postgres();
  });
  afterAll(async () => {
    await lite?.close();
    await pg?.close();
  });

  it.each(['sqlite', 'postgres'] as const)('%s: every table with a tenant_id column is exported or listed as derived', async (kind) => {
    const store = kind === 'sqlite' ? lite : pg;
    const shapes = await store.transfer.tenantTables();
    expect(shapes.length).toBeGreaterThan(15);
    expect(exportPlan(shapes).unclassified).toEqual([]);
    expect(shapes.map((s) => s.name).sort()).toEqual(
      (await (kind === 'sqlite' ? pg : lite).transfer.tenantTables()).map((s) => s.name).sort(),
    );
  });

  it('SQLite → PostgreSQL → SQLite gives the same rows: text byte for byte, bytes, times, nulls', async () => {
    const tenantId = randomUUID();
    await new TenantImporter(lite).importFile(exportFile(tenantId));
    const first = await exportText(lite, tenantId);
    const file = path.join(tmp(), 'a.ndjson');
    fs.writeFileSync(file, first);
    await new TenantImporter(pg).importFile(file);
    const second = await exportText(pg, tenantId);
    expect(JSON.parse(second.split('\n')[0])).toMatchObject({ store: 'postgres', tenantId });
    const back = await sqlite();
    try {
      fs.writeFileSync(file, second);
      await new TenantImporter(back).importFile(file);
      const third = await exportText(back, tenantId);
      expect(rowsOf(second)).toEqual(rowsOf(first));
      expect(rowsOf(third)).toEqual(rowsOf(first));
    } finally {
      await back.close();
    }
    const events = rowsOf(first).filter((r) => r.table === 'events');
    expect(events.map((e) => e.row.data)).toEqual([1, 2, 3].map((p) => `{"n":1e400,"s":"\\u0000 \\ud83d\\ude00","p":${p}}`));
    expect(events[0].row.metadata).toBe('{ "spaced" : true }');
    // Tags travel in the event's line; the tag index is made again by each import (a query finds them).
    expect(events.map((e) => e.row.tags)).toEqual(['["student:\u00e9l\u00e8ve","course:7"]', null, null]);
    expect(rowsOf(first).some((r) => r.table === 'event_tags')).toBe(false);
    for (const s of [lite, pg]) {
      const found = await s.events.readLog(tenantId, {
        direction: 'forward',
        afterPosition: 0,
        limit: 10,
        query: { items: [{ tags: ['course:7', 'student:\u00e9l\u00e8ve'] }] },
      });
      expect(found.map((e) => [e.position, e.tags])).toEqual([[1, ['student:\u00e9l\u00e8ve', 'course:7']]]);
    }
    const upload = rowsOf(first).find((r) => r.table === 'uploads').row;
    // The compile claim is the source instance's: dropped on import.
    expect(upload).toMatchObject({ claim_owner: null, claim_until: null, created_at: 1_700_000_002_000 });
  });

  it.each(['sqlite', 'postgres'] as const)('%s: a file cut short stores nothing', async (kind) => {
    const store = kind === 'sqlite' ? lite : pg;
    const tenantId = randomUUID();
    await expect(new TenantImporter(store).importFile(exportFile(tenantId, { cutAfter: 6 }))).rejects.toMatchObject({
      code: 'IMPORT_TRUNCATED',
    });
    expect(await tenantRows(store, tenantId)).toBe(0);
  });

  it('postgres: two imports of one tenant at once store it once; the other is TENANT_EXISTS', async () => {
    const tenantId = randomUUID();
    const file = exportFile(tenantId);
    const other = new PostgresStore({
      connectionString: (pg.pool as unknown as { options: { connectionString: string } }).options.connectionString,
    });
    try {
      const results = await Promise.allSettled([new TenantImporter(pg).importFile(file), new TenantImporter(other).importFile(file)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'TENANT_EXISTS' } });
      expect((await pg.pool.query('SELECT COUNT(*) AS n FROM events WHERE tenant_id = $1', [tenantId])).rows[0].n).toBe(3);
    } finally {
      await other.close();
    }
  });

  it.each(['sqlite', 'postgres'] as const)(
    '%s: removal in chunks leaves no row of the tenant, and no other tenant loses one',
    async (kind) => {
      const store = kind === 'sqlite' ? lite : pg;
      const [gone, kept] = [randomUUID(), randomUUID()];
      await new TenantImporter(store).importFile(exportFile(gone));
      await new TenantImporter(store).importFile(exportFile(kept));
      const keptBefore = await tenantRows(store, kept);
      expect(await new TenantRemover(store, undefined, { chunk: 2 }).remove(gone)).toMatchObject({ rows: expect.any(Number) });
      expect(await tenantRows(store, gone)).toBe(0);
      expect(await tenantRows(store, kept)).toBe(keptBefore);
      await expect(new TenantRemover(store).remove(gone)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    },
  );

  it.each(['sqlite', 'postgres'] as const)(
    "%s: the follow-up pass removes rows written after a removal, never a live tenant's",
    async (kind) => {
      const store = kind === 'sqlite' ? lite : pg;
      const [gone, kept] = [randomUUID(), randomUUID()];
      await new TenantImporter(store).importFile(exportFile(gone));
      await new TenantImporter(store).importFile(exportFile(kept));
      const remover = new TenantRemover(store, undefined, { chunk: 2 });
      await remover.remove(gone);
      // A late write (a request through a key another instance still had cached, say) after the rows went.
      await store.bindings.put({
        tenantId: gone,
        aggregateType: 'thing',
        reducerId: 'u1',
        className: 'C',
        bindingId: 'b1',
        boundAt: Date.now(),
      });
      expect(await tenantRows(store, gone)).toBe(1);
      expect(await remover.removeOrphans(gone)).toBe(1);
      expect(await tenantRows(store, gone)).toBe(0);
      const keptRows = await tenantRows(store, kept);
      expect(await remover.removeOrphans(kept)).toBe(0);
      expect(await tenantRows(store, kept)).toBe(keptRows);
    },
  );

  it.each(['sqlite', 'postgres'] as const)(
    '%s: tags no append could store (an edited export) are IMPORT_INVALID naming the line, nothing stored',
    async (kind) => {
      const store = kind === 'sqlite' ? lite : pg;
      for (const [tags, why] of [
        [JSON.stringify(['x'.repeat(201)]), /tags\[0\]: must be 1-200 characters/],
        [JSON.stringify(Array.from({ length: 21 }, (_, i) => `t${i}`)), /at most 20 tags/],
        [JSON.stringify(['bell\u0007']), /control characters/],
        ['[]', /an empty list is stored as no tags/],
      ] as const) {
        const tenantId = randomUUID();
        const file = exportFile(tenantId);
        const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
        const at = lines.findIndex((l) => l.includes('"table":"events"') && l.includes('course:7'));
        const row = JSON.parse(lines[at]);
        row.row.tags = tags;
        lines[at] = JSON.stringify(row);
        fs.writeFileSync(file, lines.join('\n') + '\n');
        const refusal = new TenantImporter(store).importFile(file);
        await expect(refusal).rejects.toMatchObject({ code: 'IMPORT_INVALID', details: { line: at + 1, position: 1 } });
        await expect(refusal).rejects.toThrow(why);
        expect(await tenantRows(store, tenantId)).toBe(0);
      }
    },
  );

  it.each(['sqlite', 'postgres'] as const)(
    '%s: a row the schema refuses (a NOT NULL column missing) is IMPORT_INVALID, nothing stored',
    async (kind) => {
      const store = kind === 'sqlite' ? lite : pg;
      const tenantId = randomUUID();
      const file = exportFile(tenantId);
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
      const broken = lines.map((l) => (l.includes('"table":"streams"') ? l.replace('"aggregate_type":"thing",', '') : l));
      fs.writeFileSync(file, broken.join('\n') + '\n');
      await expect(new TenantImporter(store).importFile(file)).rejects.toMatchObject({ code: 'IMPORT_INVALID' });
      expect(await tenantRows(store, tenantId)).toBe(0);
    },
  );
});
