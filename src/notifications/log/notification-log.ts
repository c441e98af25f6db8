import { Notification } from './notification';
import { NotificationPage } from './notification-page';
import { ProjectionLookup } from './projection-lookup';

export interface NotificationPageReader {
  read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]>;
}

/** GET /projections/{id}/notifications: a page of an existing projection's log. */
export class NotificationLog {
  constructor(
    private readonly projections: ProjectionLookup,
    private readonly reader: NotificationPageReader,
  ) {}

  async page(tenantId: string, projectionId: string, page: NotificationPage): Promise<Notification[]> {
    await this.projections.projection(tenantId, projectionId);
    return this.reader.read(tenantId, projectionId, page.afterSequence, page.limit);
  }
}
