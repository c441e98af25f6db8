import { Snapshot } from './event-log.port';
import { Binding } from './reducer-state.port';

export const SNAPSHOT_COLUMNS = 'aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at';

export interface SnapshotDbRow {
  aggregate_id: string;
  aggregate_type: string;
  binding_id: string;
  version: number | string;
  state: string;
  failed_version: number | string | null;
  error: string | null;
  updated_at: number | Date;
}

const ms = (v: number | Date): number => (v instanceof Date ? v.getTime() : Number(v));

export const toSnapshot = (r: SnapshotDbRow): Snapshot => ({
  aggregateId: r.aggregate_id,
  aggregateType: r.aggregate_type,
  bindingId: r.binding_id,
  version: Number(r.version),
  state: r.state,
  failedVersion: r.failed_version === null ? null : Number(r.failed_version),
  error: r.error,
  updatedAt: ms(r.updated_at),
});

export interface BindingDbRow {
  tenant_id: string;
  aggregate_type: string;
  reducer_id: string;
  class_name: string;
  binding_id: string;
  bound_at: number | Date;
}

export const toBinding = (r: BindingDbRow): Binding => ({
  tenantId: r.tenant_id,
  aggregateType: r.aggregate_type,
  reducerId: r.reducer_id,
  className: r.class_name,
  bindingId: r.binding_id,
  boundAt: ms(r.bound_at),
});
