/**
 * GET /aggregate-types/{type}/failed (SnapshotRepository.listFailed): the aggregates whose state is
 * held at a failed event, a page after an id. Few of a type's snapshots are failed, so the index
 * holds only those: a page is an index range, not a walk of the tenant's snapshots. Same text on
 * both stores (both have partial indexes).
 */
export const FAILED_STATES_MIGRATION = `
  CREATE INDEX snapshots_failed ON snapshots (tenant_id, aggregate_type, binding_id, aggregate_id) WHERE failed_version IS NOT NULL;
  `;
