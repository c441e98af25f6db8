import { DomainError } from '../common/domain-error';
import { NotificationRepository } from '../store/notification-repository.port';
import { Notification } from './notification';

/** Reads the log by cursor; a cursor that retention has passed is an error, never a silent skip. */
export class NotificationReader {
  constructor(private readonly repo: NotificationRepository) {}

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]> {
    const rows = await this.repo.read(tenantId, projectionId, afterSequence, limit);
    // Sequences have no holes: a page starting right after the cursor needs no further check.
    if (rows.length && rows[0].sequence === afterSequence + 1) return rows;
    const head = await this.repo.head(tenantId, projectionId);
    if (head && afterSequence < head.prunedSequence) {
      throw new DomainError(
        'CURSOR_EXPIRED',
        `notifications after ${afterSequence} were removed by retention; resume from oldestSequence`,
        {
          afterSequence,
          oldestSequence: head.prunedSequence + 1,
        },
      );
    }
    return rows;
  }

  async headSequence(tenantId: string, projectionId: string): Promise<number> {
    return (await this.repo.head(tenantId, projectionId))?.lastSequence ?? 0;
  }
}
