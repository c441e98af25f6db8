import Database from 'better-sqlite3';
import { Client } from 'pg';
import { webhookUrlMigration } from '../../src/store/notification-schema';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { migrations } from '../../src/store/migrations';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { ThrowawayPostgres } from '../support/throwaway-postgres';

const SQLITE_MIGRATIONS = migrations('sqlite');
const POSTGRES_MIGRATIONS = migrations('postgres');

/**
 * The migrations (src/store/migrations.ts) render one schema per dialect; this proves the two are
 * the same one. Each store is migrated for real and read back from its catalog as lines (a table's columns with a normalized
 * type and nullability, its primary key, its indexes), and the two sets of lines are compared.
 */

/**
 * Types as the kind of value kept. SQLite has no timestamp or uuid type: it keeps times as epoch ms
 * (integer) and UUIDs as text, so PostgreSQL's are compared as those.
 */
const PG_TYPES: Record<string, string> = {
  bigint: 'integer',
  integer: 'integer',
  smallint: 'integer',
  'timestamp with time zone': 'integer',
  text: 'text',
  uuid: 'text',
  bytea: 'bytes',
  'double precision': 'real',
};
const SQLITE_TYPES: Record<string, string> = { INTEGER: 'integer', TEXT: 'text', BLOB: 'bytes', REAL: 'real' };

/**
 * Differences the two lists have on purpose, each with its reason. The test fails when one goes
 * away too (then remove it here), so this list stays the true one.
 */
const KNOWN_DIFFERENCES: { line: string; onlyIn: 'sqlite' | 'postgres'; why: string }[] = [
  // SQLite cannot make an existing column NOT NULL without rebuilding the table; every insert sets it.
  { line: 'notifications.state_id integer null', onlyIn: 'sqlite', why: 'NOT NULL added by ALTER on PostgreSQL only' },
  { line: 'notifications.state_id integer not null', onlyIn: 'postgres', why: 'NOT NULL added by ALTER on PostgreSQL only' },
  // The same uniqueness: a named index on SQLite, a table constraint on PostgreSQL.
  {
    line: 'index events_by_stream on events (tenant_id, aggregate_id, version) unique',
    onlyIn: 'sqlite',
    why: 'UNIQUE constraint on PostgreSQL',
  },
  {
    line: 'index (constraint) on events (tenant_id, aggregate_id, version) unique',
    onlyIn: 'postgres',
    why: 'UNIQUE constraint on PostgreSQL',
  },
];

function typeOf(map: Record<string, string>, declared: string, where: string): string {
  const t = map[declared];
  if (!t) throw new Error(`${where}: type '${declared}' has no normalized form here; add it to the map`);
  return t;
}

function sqliteSchema(db: Database.Database): string[] {
  const lines: string[] = [];
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
  for (const { name: table } of tables) {
    lines.push(`table ${table}`);
    const cols = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; pk: number }[];
    for (const c of cols) {
      // A primary key column is NOT NULL on PostgreSQL whether or not it says so.
      const notNull = c.notnull === 1 || c.pk > 0;
      lines.push(`${table}.${c.name} ${typeOf(SQLITE_TYPES, c.type.toUpperCase(), `${table}.${c.name}`)} ${notNull ? 'not null' : 'null'}`);
    }
    const pk = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    if (pk.length) lines.push(`primary key of ${table} (${pk.map((c) => c.name).join(', ')})`);
    const indexes = db.prepare(`PRAGMA index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[];
    for (const ix of indexes) {
      if (ix.origin === 'pk') continue; // the primary key line above
      const columns = (db.prepare(`PRAGMA index_info(${ix.name})`).all() as { seqno: number; name: string }[])
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => c.name);
      // A UNIQUE constraint's index is named by each engine its own way: only an index created by name keeps it.
      const name = ix.origin === 'c' ? ix.name : '(constraint)';
      lines.push(`index ${name} on ${table} (${columns.join(', ')})${ix.unique ? ' unique' : ''}${ix.partial ? ' partial' : ''}`);
    }
  }
  return lines.sort();
}

async function postgresSchema(c: Client): Promise<string[]> {
  const lines: string[] = [];
  const tables = await c.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  for (const { table_name: table } of tables.rows) lines.push(`table ${table}`);
  const cols = await c.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    'SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema()',
  );
  for (const r of cols.rows) {
    const where = `${r.table_name}.${r.column_name}`;
    lines.push(`${where} ${typeOf(PG_TYPES, r.data_type, where)} ${r.is_nullable === 'NO' ? 'not null' : 'null'}`);
  }
  const indexes = await c.query<{
    table_name: string;
    name: string;
    unique: boolean;
    primary: boolean;
    by_constraint: boolean;
    partial: boolean;
    columns: string[];
  }>(
    `SELECT t.relname AS table_name, i.relname AS name, x.indisunique AS unique, x.indisprimary AS primary, x.indpred IS NOT NULL AS partial,
            EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = t.oid AND k.contype IN ('p', 'u')) AS by_constraint,
            ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n) AS columns
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace s ON s.oid = t.relnamespace
     WHERE s.nspname = current_schema()`,
  );
  for (const ix of indexes.rows) {
    if (ix.primary) {
      lines.push(`primary key of ${ix.table_name} (${ix.columns.join(', ')})`);
      continue;
    }
    const name = ix.by_constraint ? '(constraint)' : ix.name;
    lines.push(`index ${name} on ${ix.table_name} (${ix.columns.join(', ')})${ix.unique ? ' unique' : ''}${ix.partial ? ' partial' : ''}`);
  }
  return lines.sort();
}

let pg: ThrowawayPostgres;

beforeAll(async () => {
  pg = await ThrowawayPostgres.start();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

/** A fresh database of the shared server, with a client on it. */
async function withPostgres<T>(use: (c: Client, url: string) => Promise<T>): Promise<T> {
  const url = await pg.createDatabase('schema');
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await use(c, url);
  } finally {
    await c.end();
  }
}

describe('the SQLite and PostgreSQL migrations', () => {
  it('are the same steps: a migration added to one list only is refused', () => {
    expect(SQLITE_MIGRATIONS).toHaveLength(POSTGRES_MIGRATIONS.length);
  });

  it('make one schema: the same tables, columns (type, nullability), primary keys and indexes', async () => {
    const sqlite = new SqliteStore({ file: ':memory:' });
    await sqlite.migrate();
    const fromSqlite = sqliteSchema(sqlite.db);
    await sqlite.close();

    const fromPostgres = await withPostgres(async (c, url) => {
      const store = new PostgresStore({ connectionString: url });
      try {
        await store.migrate();
      } finally {
        await store.close();
      }
      return postgresSchema(c);
    });

    expect(fromSqlite.length).toBeGreaterThan(100);
    const onlyIn = (a: string[], b: string[]) => a.filter((l) => !b.includes(l));
    expect({ sqlite: onlyIn(fromSqlite, fromPostgres), postgres: onlyIn(fromPostgres, fromSqlite) }).toEqual({
      sqlite: KNOWN_DIFFERENCES.filter((d) => d.onlyIn === 'sqlite')
        .map((d) => d.line)
        .sort(),
      postgres: KNOWN_DIFFERENCES.filter((d) => d.onlyIn === 'postgres')
        .map((d) => d.line)
        .sort(),
    });
  });

  it('fill webhook_url from the stored settings text when it is added', async () => {
    const rows = [
      ['p-hook', '{"webhookUrl":"https://x.example/h","isolated":false,"sse":false}'],
      ['p-sse', '{"webhookUrl":null,"isolated":false,"sse":true}'],
      ['p-none', null],
    ];
    const expected = [
      { projection_id: 'p-hook', webhook_url: 'https://x.example/h' },
      { projection_id: 'p-none', webhook_url: null },
      { projection_id: 'p-sse', webhook_url: null },
    ];
    const insert = 'INSERT INTO projections (tenant_id, projection_id, name, created_at, notify_config)';
    const read = 'SELECT projection_id, webhook_url FROM projections ORDER BY projection_id';

    const at = SQLITE_MIGRATIONS.indexOf(webhookUrlMigration('sqlite'));
    expect(at).toBeGreaterThan(0);
    const db = new Database(':memory:');
    try {
      SQLITE_MIGRATIONS.slice(0, at).forEach((m) => db.exec(m));
      rows.forEach(([id, text], i) => db.prepare(`${insert} VALUES ('t', ?, ?, 1, ?)`).run(id, `n${i}`, text));
      db.exec(SQLITE_MIGRATIONS[at]);
      expect(db.prepare(read).all()).toEqual(expected);
    } finally {
      db.close();
    }

    const pgAt = POSTGRES_MIGRATIONS.indexOf(webhookUrlMigration('postgres'));
    expect(pgAt).toBe(at);
    await withPostgres(async (c) => {
      for (const m of POSTGRES_MIGRATIONS.slice(0, pgAt)) await c.query(m);
      for (const [i, [id, text]] of rows.entries()) await c.query(`${insert} VALUES ('t', $1, $2, 1, $3)`, [id, `n${i}`, text]);
      await c.query(POSTGRES_MIGRATIONS[pgAt]);
      expect((await c.query(read)).rows).toEqual(expected);
    });
  });
});
