/**
 * Told of every wake of a projection's notifications, whatever the projection and wherever its lane
 * ran (local or from another instance through Redis; not the head poll's). NotificationFeed calls it;
 * NotificationsModule binds it to WebhookDispatcher (webhooks/, which log/ does not import).
 */
export abstract class NotifiedProjections {
  abstract notified(tenantId: string, projectionId: string): void;
}
