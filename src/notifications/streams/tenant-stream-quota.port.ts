/** Gives a stream's slot back; calling it again does nothing. */
export type StreamSlot = () => void;

/**
 * The tenant-wide stream quota (all keys of a tenant together, across instances with Redis); throws
 * TOO_MANY_STREAMS with scope `tenant` when it is used up. StreamHub calls it at admission;
 * NotificationsModule binds it to TenantQuotas (src/quotas).
 */
export abstract class TenantStreamQuota {
  abstract acquireStream(tenantId: string): Promise<StreamSlot>;
}

/** No tenant-wide quota (unit setups): only the per-key and per-instance caps count. */
export const NO_TENANT_STREAM_QUOTA: TenantStreamQuota = { acquireStream: async () => () => undefined };
