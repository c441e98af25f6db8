import { Injectable } from '@nestjs/common';
import { WebhookSecrets } from '../notifications/webhooks/webhook-secrets';
import { WebhookUrlGuard } from '../notifications/webhooks/webhook-url-guard';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { uuidv7 } from '../common/uuid-v7';
import { EventWebhookDeadLetter, EventWebhookRecord } from '../store/event-webhook-records';
import { EventWebhookSubscriptions } from '../store/event-webhook-subscriptions.port';
import { EventWebhookDispatcher } from './event-webhook-dispatcher';
import { CreateEventWebhookDto } from './event-webhook.dto';
import { parseEventQuery } from '../events/event-query';

/**
 * Matching events counted for `pendingEvents` at most, among this many positions after the cursor:
 * a status read must stay cheap on a long backlog with a rare filter.
 */
export const PENDING_COUNT_CAP = 10_000;
export const PENDING_COUNT_WINDOW = 100_000;

export interface EventWebhookStatus {
  webhook: EventWebhookRecord;
  pendingEvents: number;
  deadDeliveries: number;
  headPosition: number;
}

/**
 * The event webhooks of a tenant: creation within its limit, reads with their backlog, delete,
 * replay from a position, resume of a suspended one. Delivery itself is EventWebhookDispatcher's.
 */
@Injectable()
export class EventWebhooks {
  constructor(
    private readonly repo: EventWebhookSubscriptions,
    /** WEBHOOK_URL_REFUSED for what is (or resolves to) not public. */
    private readonly guard: WebhookUrlGuard,
    /** The tenant's shared webhook secret (made on first use): every event webhook signs with it. */
    private readonly secrets: WebhookSecrets,
    /** The tenant's eventWebhooks limit (0: no limit). */
    private readonly quotas: TenantQuotas,
    /** Woken when a subscription has something to deliver now (created, replayed, resumed). */
    private readonly dispatcher: EventWebhookDispatcher,
  ) {}

  async create(tenantId: string, dto: CreateEventWebhookDto): Promise<{ status: EventWebhookStatus; secret: string }> {
    // First: a bad query is refused before the URL is looked up (VALIDATION_FAILED naming its element).
    const query = dto.query === undefined || dto.query === null ? null : parseEventQuery(dto.query, 'query');
    await this.guard.checkRegistration(dto.url);
    const head = await this.repo.headPosition(tenantId);
    const afterPosition = dto.afterPosition ?? head;
    if (afterPosition > head) {
      throw validationFailed('afterPosition', `is past the tenant's last position (${head}); use at most ${head}`);
    }
    const limit = await this.quotas.eventWebhooks(tenantId);
    const webhookId = uuidv7();
    const now = Date.now();
    const made = await this.repo.create(
      {
        tenantId,
        webhookId,
        name: dto.name ?? null,
        url: dto.url,
        aggregateTypes: dto.aggregateTypes ? [...new Set(dto.aggregateTypes)] : null,
        eventTypes: dto.eventTypes ? [...new Set(dto.eventTypes)] : null,
        query,
        afterPosition,
        createdAt: now,
      },
      limit,
    );
    if (!made) {
      const used = await this.repo.count(tenantId);
      throw new DomainError(
        'QUOTA_EXCEEDED',
        `the tenant has ${used} event webhooks and may have at most ${limit}; delete one first (nothing was stored)`,
        { quota: 'eventWebhooks', limit, used },
      );
    }
    const secret = await this.secrets.tenantSecret(tenantId);
    this.dispatcher.wake();
    return { status: await this.status(tenantId, webhookId), secret };
  }

  async list(tenantId: string): Promise<EventWebhookStatus[]> {
    const all = await this.repo.list(tenantId);
    const head = await this.repo.headPosition(tenantId);
    return Promise.all(all.map((w) => this.withCounts(w, head)));
  }

  async status(tenantId: string, webhookId: string): Promise<EventWebhookStatus> {
    return this.withCounts(await this.existing(tenantId, webhookId), await this.repo.headPosition(tenantId));
  }

  async delete(tenantId: string, webhookId: string): Promise<void> {
    if (!(await this.repo.delete(tenantId, webhookId))) throw notFound('event webhook');
  }

  /** `status`: only `dead` (live deliveries are not rows: the cursor and the status say where delivery stands). */
  async deliveries(
    tenantId: string,
    webhookId: string,
    status: string | undefined,
    afterPosition: number,
    limit: number,
  ): Promise<EventWebhookDeadLetter[]> {
    if (status !== undefined && status !== 'dead') throw validationFailed('status', "must be 'dead' (the only deliveries kept as rows)");
    await this.existing(tenantId, webhookId);
    return this.repo.deadLetters(tenantId, webhookId, afterPosition, limit);
  }

  /** Every matching event from `fromPosition` on is delivered again (their dead letters go: they are attempted again). */
  async replay(tenantId: string, webhookId: string, fromPosition: number): Promise<EventWebhookStatus> {
    const w = await this.existing(tenantId, webhookId);
    if (w.status === 'suspended') {
      throw new DomainError('WEBHOOK_SUSPENDED', 'the event webhook is suspended: resume it first (POST /event-webhooks/{id}/resume)', {
        webhookId,
      });
    }
    const head = await this.repo.headPosition(tenantId);
    if (fromPosition > head + 1) {
      throw validationFailed('fromPosition', `is past the tenant's next position (${head + 1}); use at most ${head + 1}`);
    }
    // Lost only to a suspension or a delete in between: answered as what it now is.
    if (!(await this.repo.replay(tenantId, webhookId, fromPosition, Date.now()))) return this.replay(tenantId, webhookId, fromPosition);
    this.dispatcher.wake();
    return this.status(tenantId, webhookId);
  }

  async resume(tenantId: string, webhookId: string): Promise<EventWebhookStatus> {
    const w = await this.existing(tenantId, webhookId);
    if (w.status !== 'suspended' || !(await this.repo.resume(tenantId, webhookId, Date.now()))) {
      throw new DomainError('WEBHOOK_NOT_SUSPENDED', 'the event webhook is not suspended', { webhookId });
    }
    this.dispatcher.wake();
    return this.status(tenantId, webhookId);
  }

  private async existing(tenantId: string, webhookId: string): Promise<EventWebhookRecord> {
    const w = await this.repo.get(tenantId, webhookId);
    if (!w) throw notFound('event webhook');
    return w;
  }

  private async withCounts(w: EventWebhookRecord, head: number): Promise<EventWebhookStatus> {
    const [pendingEvents, deadDeliveries] = await Promise.all([
      head > w.deliveredPosition ? this.repo.pendingCount(w, PENDING_COUNT_CAP, PENDING_COUNT_WINDOW) : 0,
      this.repo.deadCount(w.tenantId, w.webhookId),
    ]);
    return { webhook: w, pendingEvents, deadDeliveries, headPosition: head };
  }
}
