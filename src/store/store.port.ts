import { EventLog } from './event-log.port';
import { TenantRepository } from './tenant-repository.port';
import { NotificationRepository } from './notification-repository.port';
import { Lanes } from './lanes/lanes';
import { ProjectionCatalogRepository } from './projection-catalog.port';
import { WebhookRepository } from './webhook-repository';
import { BindingRepository, SnapshotRepository } from './reducer-state.port';
import { UploadRepository } from './upload-repository.port';
import { IdempotencyKeyRepository } from './idempotency-key.port';
import { TenantTransferStore } from './tenant-transfer.port';
import { AggregateErasure } from './erasure.port';
import { EventWebhookRepository } from './event-webhook-repository';

/**
 * One durable store, two adapters (sqlite/, postgres/). Later capabilities add their own
 * repositories here (reducers, snapshots, projections, lanes, notifications) so that one
 * transaction can span an append and the state it produces.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly events: EventLog;
  readonly tenants: TenantRepository;
  readonly uploads: UploadRepository;
  readonly bindings: BindingRepository;
  readonly snapshots: SnapshotRepository;
  /** Projections, their versions and the tombstones of dropped ones. */
  readonly projections: ProjectionCatalogRepository;
  /**
   * The versions' per-key lanes (inbox, state, checkpoint, holds, leases) by role; `lanes.reads`,
   * for reads on a request's path (a projection's state and lag), is on PostgreSQL over the
   * ordinary pool, so a state read never waits for a client of the lanes' own pool.
   */
  readonly lanes: Lanes;
  readonly notifications: NotificationRepository;
  readonly webhooks: WebhookRepository;
  /** Appends' idempotency keys: their expiry (the appends read and write them themselves). */
  readonly idempotencyKeys: IdempotencyKeyRepository;
  /** A whole tenant's rows, table by table: export, import, removal (src/tenant-transfer). */
  readonly transfer: TenantTransferStore;
  /** DELETE /events/{aggregateId}: an aggregate's data removed for good (erasure.port.ts). */
  readonly erasure: AggregateErasure;
  /** Event webhooks: subscriptions to the tenant's log delivered to a URL (src/event-webhooks). */
  readonly eventWebhooks: EventWebhookRepository;
  /** Runs pending schema migrations; safe to call from several instances at once. */
  migrate(): Promise<void>;
  /**
   * Readiness (GET /health/ready): one real committed write, the way appends write (SQLite: on the
   * writer thread, after checking that the data file is still the one opened). Rejects, saying why,
   * when the store cannot be written.
   */
  probeWrite(): Promise<void>;
  /** Waits for in-flight writes, then releases connections. */
  close(): Promise<void>;
}

export const STORE = Symbol('STORE');

/**
 * The write probeWrite() commits: the first migration's row rewritten with its own value. A write the
 * database must log and sync like any other, on a row every store has, so that no table of its own
 * (and no migration) is needed; the same SQL on both adapters.
 */
export const WRITE_PROBE_SQL = 'UPDATE schema_migrations SET applied_at = applied_at WHERE version = 1';
