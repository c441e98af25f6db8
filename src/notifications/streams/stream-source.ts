import { HeldScopes } from '../../tenancy/scope-check';
import { Notification } from '../log/notification';

/**
 * What the stream transports (WebSocket, SSE) need from the rest of the service; ServiceStreamSource
 * implements it over the store and the live feed.
 */
export interface StreamSource {
  /**
   * The tenant of a valid API key, the key's hash (what per-key stream caps count) and its scopes
   * (null: every scope; the upgrade needs `state:read`), else null.
   */
  authenticate(apiKey: string | undefined): Promise<{ tenantId: string; keyHash: string; scopes: HeldScopes } | null>;
  /**
   * Calls `onInvalid` once the stream's key (by hash) is revoked or expires, on any instance;
   * returns the function that stops watching (called when the stream ends).
   */
  watchKey(keyHash: string, onInvalid: () => void): () => void;
  /** The projection's stream settings, or null when the tenant has no such projection. */
  projection(tenantId: string, projectionId: string): Promise<{ sse: boolean } | null>;
  /** The last sequence assigned so far (0 when none): where a stream without a cursor starts. */
  headSequence(tenantId: string, projectionId: string): Promise<number>;
  /**
   * Up to `limit` notifications after `afterSequence`, ascending. Throws DomainError
   * CURSOR_EXPIRED (details.oldestSequence) when notifications after the cursor were already
   * removed by retention.
   */
  read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]>;
  /** `wake` is called (possibly coalesced) whenever the projection may have new notifications. Returns unsubscribe. */
  subscribe(tenantId: string, projectionId: string, wake: () => void): () => void;
}
