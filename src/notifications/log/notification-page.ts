import { Inject, Injectable, PipeTransform } from '@nestjs/common';
import { validationFailed } from '../../common/domain-error';
import { parseIntParam } from '../../common/int-param';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { DeliveryStatus } from '../../store/webhook-records';

/** A page of a projection's log (or of its deliveries): after a sequence, at most `limit`. */
export interface NotificationPage {
  afterSequence: number;
  limit: number;
}

export interface DeliveryFilter extends NotificationPage {
  status?: DeliveryStatus;
}

export interface PageLimits {
  pageDefault: number;
  pageMax: number;
}

type RawQuery = Record<string, string | undefined> | undefined;

const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'dead'];

/** Query parameters of the polling endpoints, checked in this order: afterSequence, then limit. */
export function parseNotificationPage(q: RawQuery, limits: PageLimits): NotificationPage {
  return {
    afterSequence: parseIntParam('afterSequence', q?.afterSequence, 0),
    limit: parseIntParam('limit', q?.limit, limits.pageDefault, 1, limits.pageMax),
  };
}

/** The delivery listing's query: `status` (checked first), then the page. */
export function parseDeliveryFilter(q: RawQuery, limits: PageLimits): DeliveryFilter {
  const status = q?.status;
  if (status !== undefined && !STATUSES.includes(status as DeliveryStatus))
    throw validationFailed('status', `must be one of ${STATUSES.join(', ')}`);
  return { ...(status !== undefined ? { status: status as DeliveryStatus } : {}), ...parseNotificationPage(q, limits) };
}

/** `@Query(NotificationPagePipe)`: the page, within the configured bounds, before the handler runs. */
@Injectable()
export class NotificationPagePipe implements PipeTransform<RawQuery, NotificationPage> {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}
  transform(q: RawQuery): NotificationPage {
    return parseNotificationPage(q, this.config.notifications);
  }
}

@Injectable()
export class DeliveryFilterPipe implements PipeTransform<RawQuery, DeliveryFilter> {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}
  transform(q: RawQuery): DeliveryFilter {
    return parseDeliveryFilter(q, this.config.notifications);
  }
}
