/**
 * Tombstones of dropped projection versions (issue 15), the same on both stores but for the
 * integer type. A deletion, a promotion's retirement or a replaced pending version removes the
 * version row and writes its tombstone in one transaction, BEFORE anything stops: from then on
 * every router, lane run and sweep of any instance finds the version gone. The lane sweep purges
 * the lanes and inbox rows of each tombstoned version (a late writer's included) until the
 * tombstone is old enough to be forgotten.
 *
 * Rows deletions raced with before this migration (versions no projection names, lanes and inbox
 * rows of versions that are gone) are removed here, once.
 */
export function droppedVersionsMigration(int: 'INTEGER' | 'bigint'): string {
  const named = (t: string) =>
    `EXISTS (SELECT 1 FROM projections p WHERE p.tenant_id = ${t}.tenant_id AND (p.active_version = ${t}.version_id OR p.pending_version = ${t}.version_id))`;
  const versionRow = (t: string) =>
    `EXISTS (SELECT 1 FROM projection_versions v WHERE v.tenant_id = ${t}.tenant_id AND v.version_id = ${t}.version_id)`;
  return `
  CREATE TABLE dropped_versions (
    tenant_id  TEXT NOT NULL,
    version_id TEXT NOT NULL,
    dropped_at ${int} NOT NULL,
    PRIMARY KEY (tenant_id, version_id)
  );
  DELETE FROM projection_versions WHERE NOT ${named('projection_versions')};
  DELETE FROM lane_inbox WHERE NOT ${versionRow('lane_inbox')};
  DELETE FROM lanes WHERE NOT ${versionRow('lanes')};
  `;
}
