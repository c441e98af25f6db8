import { EventLog } from '../store/event-log.port';
import { LaneRecord } from '../store/lanes/lane-records';
import { Infer, integer, nullable, object, string } from '../common/json-schema';
import { RUNTIME_FAILURE_FIELDS, RuntimeFailure } from '../tenant-code/runtime-failure';

/** The event a lane is held on, named: its lane row keeps only the tenant-wide position. */
export interface HeldEvent {
  eventId: string;
  aggregateId: string;
  eventType: string;
  position: number;
}

/** The fields a hold shows wherever it is answered (lanes listing, status, a minPosition read). */
export const HELD_EVENT_FIELDS = {
  eventId: string({ description: 'the event the lane is held on' }),
  aggregateId: string(),
  eventType: string(),
};

/** Reads the held events of `lanes` from the log, one read per distinct position (a page holds at most 100 lanes). */
export async function heldEvents(log: EventLog, tenantId: string, lanes: LaneRecord[]): Promise<Map<number, HeldEvent>> {
  const positions = [...new Set(lanes.map((l) => l.heldPosition).filter((p): p is number => p !== null))];
  const found = await Promise.all(
    positions.map(async (position) => {
      const [e] = await log.readAll(tenantId, position - 1, 1);
      return e && e.position === position ? { eventId: e.eventId, aggregateId: e.aggregateId, eventType: e.eventType, position } : null;
    }),
  );
  return new Map(found.filter((e): e is HeldEvent => e !== null).map((e) => [e.position, e]));
}

const { exceptionType, version, frames } = RUNTIME_FAILURE_FIELDS;

export const HOLD_SCHEMA = object(
  { position: integer(), error: nullable(string()), attempts: integer() },
  { ...HELD_EVENT_FIELDS, exceptionType, version, frames },
  {
    description: 'the lane is stopped on this event (eventId, aggregateId, eventType: absent only if the event is no longer in the log)',
  },
);
export type Hold = Infer<typeof HOLD_SCHEMA>;

/** A hold as answered: where, why, how often, and which event. */
export function holdView(l: LaneRecord, event: HeldEvent | undefined): Hold {
  return {
    position: l.heldPosition!,
    error: l.heldError,
    attempts: l.attempts,
    ...(event ? { eventId: event.eventId, aggregateId: event.aggregateId, eventType: event.eventType } : {}),
    ...failureFields(l.heldFailure),
  };
}

/** The exception's type, the event's version and the tenant's frames kept with the hold (held_failure), when any. */
function failureFields(text: string | null): Pick<RuntimeFailure, 'exceptionType' | 'version' | 'frames'> {
  if (text === null) return {};
  let f: RuntimeFailure;
  try {
    f = JSON.parse(text) as RuntimeFailure;
  } catch {
    return {}; // written by this service as JSON: unreadable only if damaged; the hold still shows
  }
  return {
    ...(f.exceptionType !== undefined ? { exceptionType: f.exceptionType } : {}),
    ...(f.version !== undefined ? { version: f.version } : {}),
    ...(f.frames !== undefined ? { frames: f.frames } : {}),
  };
}
