import { Notification, NotificationHead } from '../notification-repository.port';
import { ProjectionRecord, StoredNotifySettings } from '../projection-catalog.port';

const id = (tenantId: string, projectionId: string) => `${tenantId}\u0000${projectionId}`;

/**
 * The part of the notification log and the projection catalog that the webhook roles read, in
 * memory: each projection's settings (the webhook URL), its notifications and its head with the
 * webhook cursor (notification_heads.webhook_sequence in SQL). What InMemoryWebhookRepository
 * turns into deliveries; tests write it (`configure`, `log`) as lanes and deploys write the SQL
 * tables. Reads as NotificationRepository.read/head and ProjectionCatalogRepository.get do.
 */
export class InMemoryNotificationLog {
  private readonly projections = new Map<string, ProjectionRecord & { webhookUrl: string | null }>();
  private readonly logs = new Map<string, Notification[]>();
  private readonly heads = new Map<string, NotificationHead>();

  /** A projection deployed with these settings (replacing what it had). */
  configure(tenantId: string, projectionId: string, settings: StoredNotifySettings | null): void {
    this.projections.set(id(tenantId, projectionId), {
      tenantId,
      projectionId,
      name: projectionId,
      activeVersion: `${projectionId}-v1`,
      pendingVersion: null,
      createdAt: 0,
      notifyConfig: settings?.notifyConfig ?? null,
      webhookUrl: settings?.webhookUrl ?? null,
    });
  }

  /** A state change of `stateKey` logged: the projection's next sequence. */
  log(tenantId: string, projectionId: string, stateKey: string, state = '{}'): number {
    const k = id(tenantId, projectionId);
    const head = this.heads.get(k) ?? { lastSequence: 0, prunedSequence: 0, webhookSequence: 0 };
    const list = this.logs.get(k) ?? [];
    const sequence = head.lastSequence + 1;
    list.push({
      sequence,
      projectionId,
      aggregateId: stateKey,
      aggregateType: 'order',
      stateKey,
      version: 1,
      position: sequence,
      state,
      timestamp: 0,
    });
    this.logs.set(k, list);
    this.heads.set(k, { ...head, lastSequence: sequence });
    return sequence;
  }

  /** Retention: notifications up to `sequence` removed. */
  prune(tenantId: string, projectionId: string, sequence: number): void {
    const k = id(tenantId, projectionId);
    this.logs.set(
      k,
      (this.logs.get(k) ?? []).filter((n) => n.sequence > sequence),
    );
    const head = this.heads.get(k);
    if (head) head.prunedSequence = Math.max(head.prunedSequence, sequence);
  }

  async get(tenantId: string, projectionId: string): Promise<ProjectionRecord | null> {
    const p = this.projections.get(id(tenantId, projectionId));
    if (!p) return null;
    const { webhookUrl: _url, ...record } = p;
    return record;
  }

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]> {
    return (this.logs.get(id(tenantId, projectionId)) ?? []).filter((n) => n.sequence > afterSequence).slice(0, limit);
  }

  async head(tenantId: string, projectionId: string): Promise<NotificationHead | null> {
    const h = this.heads.get(id(tenantId, projectionId));
    return h ? { ...h } : null;
  }

  /** The head itself (the webhook cursor moves on it), undefined before the first notification. */
  headOf(tenantId: string, projectionId: string): NotificationHead | undefined {
    return this.heads.get(id(tenantId, projectionId));
  }

  /** Projections with a head (notifications logged), with whether a webhook is configured. */
  *allHeads(): Iterable<{ tenantId: string; projectionId: string; head: NotificationHead; webhookUrl: string | null }> {
    for (const [k, head] of this.heads) {
      const [tenantId, projectionId] = k.split('\u0000');
      yield { tenantId, projectionId, head, webhookUrl: this.projections.get(k)?.webhookUrl ?? null };
    }
  }
}
