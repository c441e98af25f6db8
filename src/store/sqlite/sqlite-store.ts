import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqlNotificationRepository } from '../sql-notification-repository';
import { Lanes } from '../lanes/lanes';
import { sqlLanes } from '../lanes/sql-lanes';
import { SqlProjectionCatalogRepository } from '../sql-projection-catalog-repository';
import { SqlBindingRepository, SqlSnapshotRepository } from '../sql-reducer-state';
import { SqlTenantRepository } from '../sql-tenant-repository';
import { SqlUploadRepository } from '../sql-upload-repository';
import { SqlWebhookRepository } from '../sql-webhook-repository';
import { SqlIdempotencyKeyRepository } from '../sql-idempotency-key-repository';
import { SqlEventWebhookRepository } from '../sql-event-webhook-repository';
import { Store, WRITE_PROBE_SQL } from '../store.port';
import { CommitWrites, SqliteSqlRunner } from './sqlite-sql-runner';
import { SqliteDirectSqlRunner } from './sqlite-direct-sql-runner';
import { SqliteWriteBatch } from './sqlite-write-batch';
import { SqliteAppendTransaction } from './sqlite-append-transaction';
import { AppendWriterThread } from './append-writer-thread';
import { openSqlite } from './sqlite-connection';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteErasureTransaction } from './sqlite-erasure';
import { AggregateErasure } from '../erasure.port';
import { migrations } from '../migrations';
import { SqlTenantTransfer } from '../sql-tenant-transfer';
import { SqliteTransferSessions } from './sqlite-transfer-sessions';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for unit tests. */
  file: string;
}

/**
 * Embedded store. WAL with synchronous=FULL: a commit is on disk before it is acknowledged.
 * better-sqlite3 is synchronous, so appends and the shared SQL repositories' group commits (lanes,
 * notifications, webhooks) run on a writer thread of their own (their fsyncs, and their waits for
 * each other's write lock, would otherwise stall the event loop); reads and rare writes (tenants,
 * uploads, bindings, snapshots outside an append) stay on this thread's connection, which WAL lets
 * read beside the writer. Both kinds run the same shared SQL repositories, over two SqlRunners.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly db: Database.Database;
  readonly events: SqliteEventLog;
  readonly tenants: SqlTenantRepository;
  readonly uploads: SqlUploadRepository;
  readonly bindings: SqlBindingRepository;
  readonly snapshots: SqlSnapshotRepository;
  /** The SQL the shared repositories run through (tests record it). */
  readonly sqlRunner: SqliteSqlRunner;
  readonly projections: SqlProjectionCatalogRepository;
  readonly lanes: Lanes;
  readonly notifications: SqlNotificationRepository;
  readonly webhooks: SqlWebhookRepository;
  readonly idempotencyKeys: SqlIdempotencyKeyRepository;
  readonly transfer: SqlTenantTransfer;
  readonly erasure: AggregateErasure;
  readonly eventWebhooks: SqlEventWebhookRepository;

  private readonly writer?: AppendWriterThread;
  /** The data file as opened (device and inode): probeWrite() checks that its path still names it. */
  private readonly opened?: { file: string; dev: number; ino: number };

  constructor(options: SqliteStoreOptions) {
    this.db = openSqlite(options.file);
    if (options.file !== ':memory:') {
      const { dev, ino } = fs.statSync(options.file);
      this.opened = { file: options.file, dev, ino };
    }
    let commitWrites: CommitWrites;
    let commitDerived: CommitWrites;
    if (options.file === ':memory:') {
      // A private in-memory database cannot be shared with a thread: write on this one.
      let tx: SqliteAppendTransaction | undefined;
      this.events = new SqliteEventLog(this.db, { append: async (reqs) => (tx ??= new SqliteAppendTransaction(this.db)).append(reqs) });
      const batch = new SqliteWriteBatch(this.db);
      commitWrites = async (writes) => batch.commit(writes);
      commitDerived = async (writes) => batch.commit(writes, true);
      let erasure: SqliteErasureTransaction | undefined;
      this.erasure = { erase: async (t, a) => (erasure ??= new SqliteErasureTransaction(this.db)).erase(t, a, Date.now()) };
    } else {
      const writer = new AppendWriterThread(options.file);
      this.writer = writer;
      this.events = new SqliteEventLog(this.db, writer);
      commitWrites = (writes) => writer.write(writes);
      commitDerived = (writes) => writer.write(writes, true);
      this.erasure = { erase: (t, a) => writer.erase(t, a, Date.now()) };
    }
    const direct = new SqliteDirectSqlRunner(this.db);
    this.tenants = new SqlTenantRepository(direct);
    this.uploads = new SqlUploadRepository(direct);
    this.bindings = new SqlBindingRepository(direct);
    this.snapshots = new SqlSnapshotRepository(direct);
    const sql = (this.sqlRunner = new SqliteSqlRunner(this.db, commitWrites));
    this.projections = new SqlProjectionCatalogRepository(sql);
    // Lane runs and routing: group commits of their own, without an fsync each (see SqlLaneRuns); reads on
    // the event loop's own connection, like the lanes' other statements.
    this.lanes = sqlLanes({ db: sql, derived: new SqliteSqlRunner(this.db, commitDerived), reads: sql });
    this.notifications = new SqlNotificationRepository(sql);
    this.webhooks = new SqlWebhookRepository(sql);
    this.idempotencyKeys = new SqlIdempotencyKeyRepository(sql);
    // Deletes through the writer thread (short chunks beside the appends); exports and imports on connections of their own.
    this.transfer = new SqlTenantTransfer(sql, new SqliteTransferSessions(options.file, this.db));
    this.eventWebhooks = new SqlEventWebhookRepository(sql);
  }

  static inDataDir(dataDir: string): SqliteStore {
    return new SqliteStore({ file: path.join(dataDir, 'events.sqlite') });
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
    );
    migrations('sqlite').forEach((sql, i) => {
      const version = i + 1;
      if (applied.has(version)) return;
      this.db
        .transaction(() => {
          this.db.exec(sql);
          this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
        })
        .immediate();
    });
    this.events.prepare();
  }

  /**
   * An open SQLite connection goes on committing to a data file that was deleted or moved away (as
   * root, permissions do not stop it either): every write would be acknowledged and then lost with
   * the process. So the path is checked first, then a real write goes through the writer thread.
   */
  async probeWrite(): Promise<void> {
    if (this.opened) {
      const { file, dev, ino } = this.opened;
      let now: fs.Stats;
      try {
        now = fs.statSync(file);
      } catch (e) {
        throw new Error(`the data file ${file} is gone (${(e as NodeJS.ErrnoException).code ?? e})`, { cause: e });
      }
      if (now.dev !== dev || now.ino !== ino) throw new Error(`the data file ${file} was replaced since it was opened`);
    }
    await this.sqlRunner.run(WRITE_PROBE_SQL, []);
  }

  /** Waits for the writer thread's in-flight commits, then closes both connections. */
  async close(): Promise<void> {
    await this.writer?.close();
    if (this.db.open) this.db.close();
  }
}
