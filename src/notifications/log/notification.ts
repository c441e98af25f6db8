import { isoTime } from '../../common/iso-time';
import { RawJson, stringifyJson } from '../../common/raw-json';
import type { Notification } from '../../store/notification-repository.port';

// The log's row type belongs to the store (which depends on nothing above it); re-exported for the
// channels that carry it.
export type { Notification };

/** The wire shape (polling element; the stream message adds `type`). */
export function notificationView(n: Notification) {
  return {
    sequence: n.sequence,
    projectionId: n.projectionId,
    aggregateId: n.aggregateId,
    aggregateType: n.aggregateType,
    stateKey: n.stateKey,
    version: n.version,
    state: new RawJson(n.state),
    timestamp: isoTime(n.timestamp),
  };
}

export function streamMessage(n: Notification) {
  return { type: 'state_changed' as const, ...notificationView(n) };
}

const texts = new WeakMap<Notification, string>();

/** `streamMessage` as JSON text, made once per notification however many clients get it. */
export function streamText(n: Notification): string {
  let t = texts.get(n);
  if (t === undefined) texts.set(n, (t = stringifyJson(streamMessage(n))));
  return t;
}

/**
 * What the stream transports (WebSocket, SSE) need from the rest of the service; the
 * notifications module implements it over the store and the live feed.
 */
export interface StreamSource {
  /** The tenant of a valid API key and the key's hash (what per-key stream caps count), else null. */
  authenticate(apiKey: string | undefined): Promise<{ tenantId: string; keyHash: string } | null>;
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
