import { LogFilters } from '../../events/log-query';
import { EventLog, StoredEvent } from '../../store/event-log.port';
import { EventFeed } from '../log/event-feed';
import { CursorFeed } from './stream-cursor';

/** What the event streams (GET /events/stream, both transports) need: the tenant's log and its doorbell. */
export interface EventStreamSource {
  /** The tenant's last position (0 when none): where a stream without afterPosition starts. */
  headPosition(tenantId: string): Promise<number>;
  /** Up to `limit` events after `afterPosition` that pass the filters, ascending. */
  read(tenantId: string, filters: LogFilters, afterPosition: number, limit: number): Promise<StoredEvent[]>;
  subscribe(tenantId: string, wake: () => void): () => void;
}

export class ServiceEventStreamSource implements EventStreamSource {
  constructor(
    private readonly log: Pick<EventLog, 'readLog' | 'headPosition'>,
    private readonly feed: EventFeed,
  ) {}

  headPosition(tenantId: string): Promise<number> {
    return this.log.headPosition(tenantId);
  }

  read(tenantId: string, filters: LogFilters, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return this.log.readLog(tenantId, { direction: 'forward', afterPosition, limit, ...filters });
  }

  subscribe(tenantId: string, wake: () => void): () => void {
    return this.feed.subscribe(tenantId, wake);
  }
}

/** One event stream's view of the log: the tenant's events passing its filters, by position. */
export function eventCursorFeed(source: EventStreamSource, tenantId: string, filters: LogFilters): CursorFeed<StoredEvent> {
  return {
    read: (after, limit) => source.read(tenantId, filters, after, limit),
    subscribe: (wake) => source.subscribe(tenantId, wake),
    numberOf: (e) => e.position,
  };
}
