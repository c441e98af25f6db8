import { EventLog, StoredEvent } from '../store/event-log.port';

export interface StreamPage {
  events: StoredEvent[];
  /** Present when more events follow: pass it as fromVersion to read on. */
  nextFromVersion?: number;
}

export class EventReader {
  constructor(private readonly log: EventLog) {}

  /** Up to `limit` events of the stream from `fromVersion` on (the controller's pipes check both and the id). */
  async readStream(tenantId: string, aggregateId: string, page: { fromVersion: number; limit: number }): Promise<StreamPage> {
    const { fromVersion, limit } = page;
    // One extra row tells whether another page follows without a count query.
    const rows = await this.log.readStream(tenantId, aggregateId, fromVersion, limit + 1);
    if (rows.length <= limit) return { events: rows };
    const events = rows.slice(0, limit);
    return { events, nextFromVersion: events[events.length - 1].version + 1 };
  }
}
