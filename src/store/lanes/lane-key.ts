/**
 * One projection version of one tenant: what a lane's rows are scoped to (a version is one upload
 * of a projection, its versionId the uploadId).
 */
export interface LaneVersion {
  readonly tenantId: string;
  readonly versionId: string;
}

/**
 * One lane: a state key of one projection version. The store's lane methods take it whole instead
 * of three positional strings; the lanes' scheduler hands the same shape around (LaneRef).
 */
export interface LaneKey extends LaneVersion {
  readonly key: string;
}
