import { validationFailed } from '../../common/domain-error';
import { parseIntParam } from '../../common/int-param';
import { Notification } from '../log/notification';
import { CursorFeed } from './stream-cursor';
import { StreamSource } from './stream-source.port';

/** A projection stream's view of the log: the projection's notifications by sequence. */
export class NotificationCursorFeed implements CursorFeed<Notification> {
  constructor(
    private readonly source: StreamSource,
    private readonly tenantId: string,
    private readonly projectionId: string,
  ) {}

  read(after: number, limit: number): Promise<Notification[]> {
    return this.source.read(this.tenantId, this.projectionId, after, limit);
  }

  numberOf(n: Notification): number {
    return n.sequence;
  }
}

/** A client-supplied cursor (query parameter or Last-Event-ID): a non-negative integer, else VALIDATION_FAILED. */
export function parseSequence(field: string, text: string): number {
  // Given but empty is an error here, not "absent".
  if (text === '') throw validationFailed(field, 'must be a non-negative integer');
  return parseIntParam(field, text, 0);
}
