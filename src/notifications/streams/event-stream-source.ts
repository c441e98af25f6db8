import { Inject, Injectable } from '@nestjs/common';
import { LogFilters } from '../../events/log-query';
import { EventLog, StoredEvent } from '../../store/event-log.port';
import { STORE, Store } from '../../store/store.port';
import { EventStreamSource } from './event-stream-source.port';
import { CursorFeed } from './stream-cursor';

@Injectable()
export class ServiceEventStreamSource implements EventStreamSource {
  private readonly log: Pick<EventLog, 'readLog' | 'headPosition'>;

  constructor(@Inject(STORE) store: Store) {
    this.log = store.events;
  }

  headPosition(tenantId: string): Promise<number> {
    return this.log.headPosition(tenantId);
  }

  read(tenantId: string, filters: LogFilters, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return this.log.readLog(tenantId, { direction: 'forward', afterPosition, limit, ...filters });
  }
}

/** One event stream's view of the log: the tenant's events passing its filters, by position. */
export class EventCursorFeed implements CursorFeed<StoredEvent> {
  constructor(
    private readonly source: EventStreamSource,
    private readonly tenantId: string,
    private readonly filters: LogFilters,
  ) {}

  read(after: number, limit: number): Promise<StoredEvent[]> {
    return this.source.read(this.tenantId, this.filters, after, limit);
  }

  numberOf(e: StoredEvent): number {
    return e.position;
  }
}
