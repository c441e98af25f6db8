import { EventLog } from './event-log.port';
import { TenantRepository } from './tenant-repository.port';
import { NotificationRepository } from './notification-repository.port';
import { LaneStore } from './lane-store.port';
import { ProjectionCatalogRepository } from './projection-catalog.port';
import { WebhookRepository } from './webhook-repository.port';
import { BindingRepository, SnapshotRepository } from './reducer-state.port';
import { UploadRepository } from './upload-repository.port';

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
  /** The versions' per-key lanes: inbox, state, checkpoint, holds, leases. */
  readonly lanes: LaneStore;
  readonly notifications: NotificationRepository;
  readonly webhooks: WebhookRepository;
  /** Runs pending schema migrations; safe to call from several instances at once. */
  migrate(): Promise<void>;
  /** Waits for in-flight writes, then releases connections. */
  close(): Promise<void>;
}

export const STORE = Symbol('STORE');
