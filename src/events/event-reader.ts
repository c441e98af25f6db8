import { Injectable } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { EventLog, EventQuery, StoredEvent } from '../store/event-log.port';
import { Direction, LogFilters } from './log-query';

export interface StreamPage {
  events: StoredEvent[];
  /** Present when more events follow: pass it as fromVersion to read on. */
  nextFromVersion?: number;
  /** direction=backward: present when older events precede; pass it as beforeVersion. */
  nextBeforeVersion?: number;
}

export interface StreamPageRequest {
  /** Forward: the first version to return (default 1). */
  fromVersion?: number;
  /** Backward: return versions below this one (default: from the last). */
  beforeVersion?: number;
  limit: number;
}

export interface LogPageRequest extends LogFilters {
  /** DCB query (POST /events/query, the `query` parameter): AND-ed with the type lists. */
  query?: EventQuery;
  direction: Direction;
  afterPosition?: number;
  beforePosition?: number;
  limit: number;
}

export interface LogPage {
  events: StoredEvent[];
  /** Forward: always — the last position returned, or the cursor given when nothing (yet) follows it. */
  nextAfterPosition?: number;
  /** Backward: the oldest position returned, present while the page was full (older events may match). */
  nextBeforePosition?: number;
}

@Injectable()
export class EventReader {
  constructor(private readonly log: EventLog) {}

  /** Up to `limit` events of the stream from `fromVersion` on (the controller's pipes check both and the id). */
  async readStream(tenantId: string, aggregateId: string, page: StreamPageRequest): Promise<StreamPage> {
    if (page.beforeVersion !== undefined) throw validationFailed('beforeVersion', 'only with direction=backward');
    const { fromVersion = 1, limit } = page;
    // One extra row tells whether another page follows without a count query.
    const rows = await this.log.readStream(tenantId, aggregateId, fromVersion, limit + 1);
    if (rows.length <= limit) return { events: rows };
    const events = rows.slice(0, limit);
    return { events, nextFromVersion: events[events.length - 1].version + 1 };
  }

  /**
   * The stream newest first, from just before `beforeVersion` (absent: from its last event). Versions
   * are 1..N without gaps, so whether older events precede is known from the last one returned.
   */
  async readStreamBackward(tenantId: string, aggregateId: string, page: StreamPageRequest): Promise<StreamPage> {
    if (page.fromVersion !== undefined) throw validationFailed('fromVersion', 'not with direction=backward (use beforeVersion)');
    const atOrBefore = page.beforeVersion === undefined ? Number.MAX_SAFE_INTEGER : page.beforeVersion - 1;
    const events = atOrBefore < 1 ? [] : await this.log.readStreamBackward(tenantId, aggregateId, atOrBefore, page.limit);
    const oldest = events[events.length - 1];
    return oldest && oldest.version > 1 ? { events, nextBeforeVersion: oldest.version } : { events };
  }

  /**
   * A page of the tenant's log. A forward page always names where to go on from (`nextAfterPosition`),
   * so a poller never has to remember a cursor of its own; a backward page names one only while it
   * may not have reached the start.
   */
  async readLog(tenantId: string, req: LogPageRequest): Promise<LogPage> {
    const filters = { aggregateTypes: req.aggregateTypes, eventTypes: req.eventTypes, ...(req.query ? { query: req.query } : {}) };
    if (req.direction === 'backward') {
      if (req.afterPosition !== undefined) throw validationFailed('afterPosition', 'not with direction=backward (use beforePosition)');
      const events = await this.log.readLog(tenantId, {
        direction: 'backward',
        beforePosition: req.beforePosition,
        limit: req.limit,
        ...filters,
      });
      const full = events.length === req.limit;
      return full ? { events, nextBeforePosition: events[events.length - 1].position } : { events };
    }
    if (req.beforePosition !== undefined) throw validationFailed('beforePosition', 'only with direction=backward');
    const afterPosition = req.afterPosition ?? 0;
    const events = await this.log.readLog(tenantId, { direction: 'forward', afterPosition, limit: req.limit, ...filters });
    return { events, nextAfterPosition: events.length > 0 ? events[events.length - 1].position : afterPosition };
  }
}
