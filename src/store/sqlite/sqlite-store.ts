import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../store.port';
import { SqliteEventLog } from './sqlite-event-log';
import { SQLITE_MIGRATIONS } from './sqlite-migrations';
import { SqliteTenantRepository } from './sqlite-tenant-repository';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for unit tests. */
  file: string;
}

/**
 * Embedded store. WAL with synchronous=FULL: a commit is on disk before it is acknowledged.
 * better-sqlite3 is synchronous, so a group commit blocks the event loop for one fsync; the
 * batcher keeps that to one per batch rather than one per append.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly db: Database.Database;
  readonly events: SqliteEventLog;
  readonly tenants: SqliteTenantRepository;

  constructor(options: SqliteStoreOptions) {
    if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    const mode = this.db.pragma('journal_mode', { simple: true });
    if (options.file !== ':memory:' && mode !== 'wal') {
      throw new Error(`SQLite refused WAL mode (got '${mode}'); the data directory may not support it`);
    }
    this.events = new SqliteEventLog(this.db);
    this.tenants = new SqliteTenantRepository(this.db);
  }

  static inDataDir(dataDir: string): SqliteStore {
    return new SqliteStore({ file: path.join(dataDir, 'events.sqlite') });
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
    );
    SQLITE_MIGRATIONS.forEach((sql, i) => {
      const version = i + 1;
      if (applied.has(version)) return;
      this.db.transaction(() => {
        this.db.exec(sql);
        this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
      }).immediate();
    });
    this.events.prepare();
    this.tenants.prepare();
  }

  async close(): Promise<void> {
    // Every write here is synchronous, so nothing can be in flight when close runs.
    if (this.db.open) this.db.close();
  }
}
