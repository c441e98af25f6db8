/**
 * The live streams open on this instance, as the feeds wake them. NotificationFeed and EventFeed call
 * it; NotificationsModule binds it to StreamHub (streams/, which log/ does not import), the owner of
 * every admitted stream's cursor. A wake only: each cursor reads what is new from the store itself.
 */
export abstract class StreamWakeups {
  /** Wakes the cursor of every stream of this projection open here. */
  abstract wakeProjection(tenantId: string, projectionId: string): void;
  /** Wakes the cursor of every event stream (GET /events/stream) of this tenant open here. */
  abstract wakeEventStreams(tenantId: string): void;
  /** The projections with a stream open here: the head poll reads only theirs. */
  abstract streamedProjections(): [tenantId: string, projectionId: string][];
  /** The tenants with an event stream open here. */
  abstract streamedTenants(): string[];
}
