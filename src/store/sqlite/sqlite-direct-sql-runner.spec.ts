import Database from 'better-sqlite3';
import { sqlTime } from '../sql-dialect';
import { SqliteDirectSqlRunner } from './sqlite-direct-sql-runner';

function runner() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, at INTEGER NOT NULL, n INTEGER NOT NULL DEFAULT 0)');
  return { db, sql: new SqliteDirectSqlRunner(db) };
}

describe('SqliteDirectSqlRunner', () => {
  it('has a write in the store when its call returns, before it is awaited', async () => {
    const { db, sql } = runner();
    const written = sql.run('INSERT INTO t (id, at) VALUES (?, ?)', ['a', 1]);
    expect(db.prepare('SELECT id FROM t').all()).toEqual([{ id: 'a' }]);
    expect(await written).toBe(1);
  });

  it('binds a time value as its epoch milliseconds', async () => {
    const { sql } = runner();
    await sql.run('INSERT INTO t (id, at) VALUES (?, ?)', ['a', sqlTime(1_700_000_000_123)]);
    expect(await sql.all('SELECT at FROM t WHERE at = ?', [sqlTime(1_700_000_000_123)])).toEqual([{ at: 1_700_000_000_123 }]);
  });

  it('keeps nothing of a batch whose guard changed no row, and answers false', async () => {
    const { sql } = runner();
    const kept = await sql.batch([
      { sql: 'INSERT INTO t (id, at) VALUES (?, ?)', params: ['a', 1] },
      { sql: 'UPDATE t SET n = 1 WHERE id = ?', params: ['missing'], mustChange: true },
    ]);
    expect(kept).toBe(false);
    expect(await sql.all('SELECT id FROM t', [])).toEqual([]);
  });

  it('keeps nothing of a batch one statement of which fails, and throws that statement’s error', async () => {
    const { sql } = runner();
    await sql.run('INSERT INTO t (id, at) VALUES (?, ?)', ['a', 1]);
    await expect(
      sql.batch([
        { sql: 'INSERT INTO t (id, at) VALUES (?, ?)', params: ['b', 2] },
        { sql: 'INSERT INTO t (id, at) VALUES (?, ?)', params: ['a', 3] },
      ]),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(await sql.all('SELECT id FROM t ORDER BY id', [])).toEqual([{ id: 'a' }]);
  });
});
