import { eventStreamText } from '../../events/event-views';
import { StoredEvent } from '../../store/event-log.port';
import { Notification, streamText } from '../log/notification';

/** How one kind of stream writes its items, on both transports. */
export interface StreamWire<T> {
  /** The JSON text of one message (WebSocket message, SSE data). */
  text(item: T): string;
  /** Its SSE `event:` name. */
  sseEvent: string;
  /** The SSE `id:` and the number a slow consumer resumes after. */
  numberOf(item: T): number;
  /** The field naming that number in the slow-consumer close reason / error event. */
  resumeField: 'resumeAfterSequence' | 'resumeAfterPosition';
}

export const NOTIFICATION_WIRE: StreamWire<Notification> = {
  text: streamText,
  sseEvent: 'state_changed',
  numberOf: (n) => n.sequence,
  resumeField: 'resumeAfterSequence',
};

export const EVENT_WIRE: StreamWire<StoredEvent> = {
  text: eventStreamText,
  sseEvent: 'event',
  numberOf: (e) => e.position,
  resumeField: 'resumeAfterPosition',
};
