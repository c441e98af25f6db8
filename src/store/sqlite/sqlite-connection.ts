import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Opens the embedded database the one way every connection must: WAL, and synchronous=FULL so
 * that a commit is on disk before it is acknowledged.
 */
export function openSqlite(file: string): Database.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  const mode = db.pragma('journal_mode', { simple: true });
  if (file !== ':memory:' && mode !== 'wal') {
    db.close();
    throw new Error(`SQLite refused WAL mode (got '${mode}'); the data directory may not support it`);
  }
  return db;
}
