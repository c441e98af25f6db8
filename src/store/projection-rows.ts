import { ProjectionVersion } from './projection-catalog.port';

/** Rows per multi-row INSERT or IN list (well below both engines' parameter limits). */
export const IN_CHUNK = 500;

export const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A projection_versions row (the catalog reads them; the sweep's query selects the same columns). */
export function toVersion(r: any): ProjectionVersion {
  return {
    tenantId: r.tenant_id,
    versionId: r.version_id,
    projectionId: r.projection_id,
    className: r.class_name,
    targetPosition: Number(r.target_position),
    routedPosition: Number(r.routed_position),
    caughtUpAt: nullableNumber(r.caught_up_at),
    createdAt: Number(r.created_at),
  };
}
