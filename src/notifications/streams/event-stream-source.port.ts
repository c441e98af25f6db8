import { LogFilters } from '../../events/log-query';
import { StoredEvent } from '../../store/event-log.port';

/**
 * What the event streams (GET /events/stream, both transports) read: the tenant's log by position.
 * StreamHub calls it; NotificationsModule binds it to ServiceEventStreamSource (store.events).
 */
export abstract class EventStreamSource {
  /** The tenant's last position (0 when none): where a stream without afterPosition starts. */
  abstract headPosition(tenantId: string): Promise<number>;
  /** Up to `limit` events after `afterPosition` that pass the filters, ascending. */
  abstract read(tenantId: string, filters: LogFilters, afterPosition: number, limit: number): Promise<StoredEvent[]>;
}
