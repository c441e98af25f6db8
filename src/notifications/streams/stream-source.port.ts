import { HeldScopes } from '../../tenancy/scope-check';
import { Notification } from '../log/notification';

/**
 * What StreamHub needs from the rest of the service to admit and feed the projection streams;
 * NotificationsModule binds it to ServiceStreamSource (the store, the tenant directory, the log).
 */
export abstract class StreamSource {
  /**
   * The tenant of a valid API key, the key's hash (what per-key stream caps count) and its scopes
   * (null: every scope; the upgrade needs `state:read`), else null.
   */
  abstract authenticate(apiKey: string | undefined): Promise<{ tenantId: string; keyHash: string; scopes: HeldScopes } | null>;
  /**
   * Calls `onInvalid` once the stream's key (by hash) is revoked or expires, on any instance;
   * returns the function that stops watching (called when the stream ends).
   */
  abstract watchKey(keyHash: string, onInvalid: () => void): () => void;
  /** The projection's stream settings, or null when the tenant has no such projection. */
  abstract projection(tenantId: string, projectionId: string): Promise<{ sse: boolean } | null>;
  /** The last sequence assigned so far (0 when none): where a stream without a cursor starts. */
  abstract headSequence(tenantId: string, projectionId: string): Promise<number>;
  /**
   * Up to `limit` notifications after `afterSequence`, ascending. Throws DomainError
   * CURSOR_EXPIRED (details.oldestSequence) when notifications after the cursor were already
   * removed by retention.
   */
  abstract read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]>;
}
