/**
 * Told of every wake of a projection's notifications, whatever the projection and wherever its
 * lane ran. NotificationFeed calls it; WebhookDispatcher implements it (NotificationsModule binds
 * it), so the log does not depend on the webhooks.
 */
export abstract class NotifiedProjections {
  abstract notified(tenantId: string, projectionId: string): void;
}
