import { Pool, types } from 'pg';
import { SqlNotificationRepository } from '../sql-notification-repository';
import { SqlProjectionCatalogRepository } from '../sql-projection-catalog-repository';
import { SqlBindingRepository, SqlSnapshotRepository } from '../sql-reducer-state';
import { SqlTenantRepository } from '../sql-tenant-repository';
import { SqlUploadRepository } from '../sql-upload-repository';
import { SqlWebhookRepository } from '../sql-webhook-repository';
import { SqlIdempotencyKeyRepository } from '../sql-idempotency-key-repository';
import { SqlEventWebhookRepository } from '../sql-event-webhook-repository';
import { Store, WRITE_PROBE_SQL } from '../store.port';
import { Lanes } from '../lanes/lanes';
import { sqlLanes } from '../lanes/sql-lanes';
import { PostgresSqlRunner } from './postgres-sql-runner';
import { PostgresEventLog } from './postgres-event-log';
import { migrations } from '../migrations';
import { SqlTenantTransfer } from '../sql-tenant-transfer';
import { PostgresTransferSessions } from './postgres-transfer-sessions';
import { InflightWrites } from './inflight-writes';

export interface PostgresStoreOptions {
  connectionString: string;
  poolSize?: number;
  /** Connections of the lanes' own pool (LANE_POOL_SIZE, default 4): lane runs never take one an append waits for. */
  lanePoolSize?: number;
  /**
   * Runs inside an append transaction just before COMMIT. Tests use it to hold a transaction
   * open and show that later commits of the same tenant cannot overtake it.
   */
  beforeCommit?: (tenantIds: string[]) => Promise<void>;
}

// Arbitrary constant: serialises migrations when several instances start together.
const MIGRATION_LOCK = 72_601_143;

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly pool: Pool;
  /** The lane store's reads and writes (issue 25, item 2): appends never queue behind lane work for a client. */
  readonly lanePool: Pool;
  readonly events: PostgresEventLog;
  readonly tenants: SqlTenantRepository;
  readonly uploads: SqlUploadRepository;
  readonly bindings: SqlBindingRepository;
  readonly snapshots: SqlSnapshotRepository;
  readonly projections: SqlProjectionCatalogRepository;
  readonly lanes: Lanes;
  readonly notifications: SqlNotificationRepository;
  readonly webhooks: SqlWebhookRepository;
  readonly idempotencyKeys: SqlIdempotencyKeyRepository;
  readonly transfer: SqlTenantTransfer;
  /** The event log erases too: it holds the stream versions an erasure must drop from its cache. */
  readonly erasure: PostgresEventLog;
  readonly eventWebhooks: SqlEventWebhookRepository;
  private readonly inflight = new InflightWrites();

  constructor(options: PostgresStoreOptions) {
    const pool = (max: number) => {
      const p = new Pool({
        connectionString: options.connectionString,
        max,
        // A server that does not answer must fail requests (503/500), not hang them.
        connectionTimeoutMillis: 10_000,
        // bigint (int8) as JS number: positions and versions stay far below 2^53.
        types: { getTypeParser: (oid: number, format?: any) => (oid === 20 ? Number : types.getTypeParser(oid, format)) } as any,
      });
      // An idle client's error (server restart) must not crash the process; the next query reconnects.
      p.on('error', () => undefined);
      return p;
    };
    this.pool = pool(options.poolSize ?? 10);
    this.lanePool = pool(options.lanePoolSize ?? 4);
    this.events = new PostgresEventLog(this.pool, this.inflight, options.beforeCommit);
    this.erasure = this.events;
    const sql = new PostgresSqlRunner(this.pool);
    this.tenants = new SqlTenantRepository(sql);
    this.uploads = new SqlUploadRepository(sql);
    this.bindings = new SqlBindingRepository(sql);
    this.snapshots = new SqlSnapshotRepository(sql);
    this.projections = new SqlProjectionCatalogRepository(sql);
    // Lane runs and routing: a pool of their own, their derived rows committed without waiting
    // for the WAL flush (see SqlLaneRuns); leases and operator actions on the same pool, synchronously; a request's reads
    // on the ordinary pool.
    this.lanes = sqlLanes({
      db: new PostgresSqlRunner(this.lanePool),
      derived: new PostgresSqlRunner(this.lanePool, true),
      reads: sql,
    });
    this.notifications = new SqlNotificationRepository(sql);
    this.webhooks = new SqlWebhookRepository(sql);
    this.idempotencyKeys = new SqlIdempotencyKeyRepository(sql);
    this.transfer = new SqlTenantTransfer(sql, new PostgresTransferSessions(this.pool));
    this.eventWebhooks = new SqlEventWebhookRepository(sql);
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    client.on('error', () => undefined); // see with-transaction.ts
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => Number(r.version)));
      const list = migrations('postgres');
      for (let i = 0; i < list.length; i++) {
        if (applied.has(i + 1)) continue;
        await client.query('BEGIN');
        try {
          await client.query(list[i]);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [i + 1]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw e;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  /** A committed write on a pooled connection: the server is reachable and accepts writes (not a read-only standby). */
  async probeWrite(): Promise<void> {
    await this.pool.query(WRITE_PROBE_SQL);
  }

  async close(): Promise<void> {
    await this.inflight.drained();
    await Promise.all([this.pool.end(), this.lanePool.end()]);
  }
}
