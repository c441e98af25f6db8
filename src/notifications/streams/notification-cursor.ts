import { validationFailed } from '../../common/domain-error';
import { parseIntParam } from '../../common/int-param';
import { Notification } from '../log/notification';
import { StreamCursor, StreamCursorOptions } from './stream-cursor';
import { StreamSource } from './stream-source';

export type NotificationCursorOptions = StreamCursorOptions;

/** A projection stream's cursor: the projection's notifications by sequence (StreamCursor). */
export class NotificationCursor extends StreamCursor<Notification> {
  constructor(
    source: StreamSource,
    tenantId: string,
    projectionId: string,
    afterSequence: number,
    send: (n: Notification) => boolean,
    opts: NotificationCursorOptions,
  ) {
    super(
      {
        read: (after, limit) => source.read(tenantId, projectionId, after, limit),
        subscribe: (wake) => source.subscribe(tenantId, projectionId, wake),
        numberOf: (n) => n.sequence,
      },
      afterSequence,
      send,
      opts,
    );
  }

  /** The sequence of the last notification handed to the transport (the starting cursor before any). */
  get lastSequence(): number {
    return this.lastNumber;
  }
}

/** A client-supplied cursor (query parameter or Last-Event-ID): a non-negative integer, else VALIDATION_FAILED. */
export function parseSequence(field: string, text: string): number {
  // Given but empty is an error here, not "absent".
  if (text === '') throw validationFailed(field, 'must be a non-negative integer');
  return parseIntParam(field, text, 0);
}
