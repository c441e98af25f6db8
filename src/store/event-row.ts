import { StoredEvent, StreamInfo } from './event-log.port';

/** Column names shared by both adapters, so one mapper reads either. */
export interface EventDbRow {
  position: number | string;
  event_id: string;
  aggregate_id: string;
  aggregate_type: string;
  event_type: string;
  version: number | string;
  created_at: number | string | Date;
  data: string;
  metadata: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  trace_parent: string | null;
  trace_state: string | null;
  erased_at?: number | string | Date | null;
  /** The tags' JSON array as appended; NULL when none (event-tags-schema.ts). */
  tags?: string | null;
}

export const EVENT_COLUMNS =
  'position, event_id, aggregate_id, aggregate_type, event_type, version, created_at, data, metadata, correlation_id, causation_id, trace_parent, trace_state, erased_at, tags';

export const toStoredEvent = (r: EventDbRow): StoredEvent => ({
  position: Number(r.position),
  eventId: r.event_id,
  aggregateId: r.aggregate_id,
  aggregateType: r.aggregate_type,
  eventType: r.event_type,
  version: Number(r.version),
  timestamp: r.created_at instanceof Date ? r.created_at.getTime() : Number(r.created_at),
  data: r.data,
  metadata: r.metadata,
  correlationId: r.correlation_id,
  causationId: r.causation_id,
  ...(r.trace_parent ? { traceParent: r.trace_parent } : {}),
  ...(r.trace_state ? { traceState: r.trace_state } : {}),
  ...(r.erased_at != null ? { erasedAt: epochMsOf(r.erased_at) } : {}),
  ...(r.tags != null ? tagsOf(r.tags) : {}),
});

/** `tags` as StoredEvent has it: present only when the event has some. */
function tagsOf(text: string): Pick<StoredEvent, 'tags'> {
  const tags = JSON.parse(text) as string[];
  return tags.length > 0 ? { tags } : {};
}

/** The `events.tags` column's value for an event's tags: NULL when none. */
export const tagsColumn = (tags: string[] | undefined): string | null => (tags && tags.length > 0 ? JSON.stringify(tags) : null);

/** A time column as epoch ms: SQLite keeps integers, PostgreSQL timestamptz (a Date) or bigint text. */
export const epochMsOf = (v: number | string | Date): number => (v instanceof Date ? v.getTime() : Number(v));

/** A streams row as both adapters read it. */
export interface StreamDbRow {
  aggregate_type: string;
  version: number | string;
  erased_at: number | string | Date | null;
}

export const toStreamInfo = (r: StreamDbRow): StreamInfo => ({
  aggregateType: r.aggregate_type,
  version: Number(r.version),
  ...(r.erased_at != null ? { erasedAt: epochMsOf(r.erased_at) } : {}),
});
