/**
 * The state text of a key whose projection removed its state (IDeletableProjection): JSON null, as the
 * host writes it. The lane then stores no state (NULL); its notification keeps this text and says
 * `deleted: true`. No other state is JSON null: Apply returning null fails its event.
 */
export const REMOVED_STATE = 'null';

/**
 * One state change of a projection, as every channel carries it (polling, WebSocket, SSE,
 * webhook). `sequence` is per projection, strictly increasing, gap-free, assigned in the same
 * transaction that stored the state.
 */
export interface Notification {
  sequence: number;
  projectionId: string;
  aggregateId: string;
  aggregateType: string;
  stateKey: string;
  /** The event's version in its aggregate. */
  version: number;
  /** The event's tenant-wide position. */
  position: number;
  /** JSON text of the projection state under `stateKey` after the event; REMOVED_STATE when the event removed it. */
  state: string;
  /** Epoch ms of the event. */
  timestamp: number;
  /**
   * The W3C traceparent the notification continues: with tracing off, the one sent with its event's
   * append; with tracing on, the service's span in that trace. Absent when its append sent none (and
   * tracing did not trace it).
   */
  traceParent?: string;
  /** The W3C tracestate sent with its event's append; absent when none was. */
  traceState?: string;
}

/** A projection's state change, handed to `LaneRuns.applied` to be logged with it. */
export interface StateChange {
  position: number;
  aggregateId: string;
  aggregateType: string;
  version: number;
  timestamp: number;
  /** JSON text; REMOVED_STATE when the event removed the key's state. */
  state: string;
  /** Stored with the notification (notifications.trace_parent): the trace its webhook attempts and stream messages continue. */
  traceParent?: string;
  /** Stored with the notification (notifications.trace_state): the event's tracestate, sent on with it. */
  traceState?: string;
}

export interface NotificationHead {
  lastSequence: number;
  /** Everything up to here was removed by retention. */
  prunedSequence: number;
  /** Everything up to here has become a webhook delivery. */
  webhookSequence: number;
}

export interface RetentionPolicy {
  /** Newest notifications kept per projection, whatever their age. */
  keepCount: number;
  /** Older ones (by commit time, epoch ms) may go. */
  removeBefore: number;
}

/**
 * The notification log (written by `LaneRuns.applied`), read by every channel (store.notifications).
 * Adapter: SqlNotificationRepository (both stores). Who calls it: notifications/ (reader, retention, settings, webhooks).
 */
export abstract class NotificationRepository {
  /** Ascending, after `afterSequence`. */
  abstract read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]>;
  abstract head(tenantId: string, projectionId: string): Promise<NotificationHead | null>;
  /**
   * Removes what the policy lets go (past the newest `keepCount` and older than `removeBefore`), but
   * nothing a webhook delivery still needs (not yet turned into a delivery, or pending) unless the
   * endpoint is suspended. Returns the new pruned sequence.
   */
  abstract prune(tenantId: string, projectionId: string, policy: RetentionPolicy): Promise<number>;
  /**
   * Projections the policy has something to remove from: more than `keepCount` notifications kept,
   * and the oldest kept one from before `removeBefore`. One statement: a projection with nothing to
   * remove costs an index probe in it, not statements of its own.
   */
  abstract headsToPrune(policy: RetentionPolicy): Promise<{ tenantId: string; projectionId: string }[]>;
}
