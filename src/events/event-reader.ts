import { validationFailed } from '../common/domain-error';
import { parseIntParam } from '../common/int-param';
import { EventLog, StoredEvent } from '../store/event-log.port';
import { AGGREGATE_ID_PATTERN, LIMITS } from './event-limits';

export interface StreamPage {
  events: StoredEvent[];
  /** Present when more events follow: pass it as fromVersion to read on. */
  nextFromVersion?: number;
}

export class EventReader {
  constructor(private readonly log: EventLog) {}

  async readStream(tenantId: string, aggregateId: string, query: { fromVersion?: string; limit?: string }): Promise<StreamPage> {
    if (aggregateId.length > LIMITS.aggregateIdMax || !AGGREGATE_ID_PATTERN.test(aggregateId)) {
      throw validationFailed('aggregateId', 'is not a valid aggregate id');
    }
    const fromVersion = parseIntParam('fromVersion', query.fromVersion, 1, 1, Number.MAX_SAFE_INTEGER);
    const limit = parseIntParam('limit', query.limit, LIMITS.readPageDefault, 1, LIMITS.readPageMax);
    // One extra row tells whether another page follows without a count query.
    const rows = await this.log.readStream(tenantId, aggregateId, fromVersion, limit + 1);
    if (rows.length <= limit) return { events: rows };
    const events = rows.slice(0, limit);
    return { events, nextFromVersion: events[events.length - 1].version + 1 };
  }
}
