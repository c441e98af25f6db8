import { EventWebhookClaims } from '../event-webhook-claims.port';
import { EventWebhookClaim, EventWebhookDeadLetter, EventWebhookPage, EventWebhookRecord, NewEventWebhook } from '../event-webhook-records';
import { EventWebhookSubscriptions } from '../event-webhook-subscriptions.port';
import { StoredEvent } from '../event-log.port';
import { InMemoryTenantLog } from './in-memory-tenant-log';
import { matchesEventQuery } from '../event-query-match';

const id = (tenantId: string, webhookId: string) => `${tenantId}\u0000${webhookId}`;
const matches = (w: EventWebhookRecord, e: StoredEvent) =>
  (w.aggregateTypes === null || w.aggregateTypes.includes(e.aggregateType)) &&
  (w.eventTypes === null || w.eventTypes.includes(e.eventType)) &&
  (w.query === null || matchesEventQuery(w.query, e));

/**
 * Both event-webhook roles in memory, over an InMemoryTenantLog: the same answers as
 * SqlEventWebhookRepository (its claims, fences and dead-letter rules), proved by the event
 * webhook conformance suite (test/store/event-webhook-store.conformance.ts). For unit tests; one
 * process, so every write is atomic by itself.
 */
export class InMemoryEventWebhookRepository implements EventWebhookSubscriptions, EventWebhookClaims {
  private readonly webhooks = new Map<string, EventWebhookRecord>();
  private readonly dead = new Map<string, Map<number, EventWebhookDeadLetter>>();

  constructor(readonly log: InMemoryTenantLog) {}

  async create(w: NewEventWebhook, limit: number) {
    // Counted and inserted with no await between: one creation at a time, as the SQL's tenant lock makes it.
    if (limit !== 0 && this.ofTenant(w.tenantId).length >= limit) return false;
    if (this.webhooks.has(id(w.tenantId, w.webhookId))) throw new Error(`event webhook ${w.webhookId} exists`);
    this.webhooks.set(id(w.tenantId, w.webhookId), {
      tenantId: w.tenantId,
      webhookId: w.webhookId,
      name: w.name,
      url: w.url,
      aggregateTypes: w.aggregateTypes,
      eventTypes: w.eventTypes,
      query: w.query,
      status: 'active',
      deliveredPosition: w.afterPosition,
      attempts: 0,
      nextAttemptAt: w.createdAt,
      lastError: null,
      lastErrorAt: null,
      consecutiveDead: 0,
      suspendedAt: null,
      suspendedReason: null,
      createdAt: w.createdAt,
      claimOwner: null,
      claimUntil: null,
    });
    return true;
  }

  async count(tenantId: string) {
    return this.ofTenant(tenantId).length;
  }

  async get(tenantId: string, webhookId: string) {
    const w = this.webhooks.get(id(tenantId, webhookId));
    return w ? { ...w } : null;
  }

  async list(tenantId: string) {
    return this.ofTenant(tenantId)
      .sort((a, b) => a.createdAt - b.createdAt || (a.webhookId < b.webhookId ? -1 : 1))
      .map((w) => ({ ...w }));
  }

  async delete(tenantId: string, webhookId: string) {
    this.dead.delete(id(tenantId, webhookId));
    return this.webhooks.delete(id(tenantId, webhookId));
  }

  async headPosition(tenantId: string) {
    return this.log.head(tenantId);
  }

  async deadCount(tenantId: string, webhookId: string) {
    return this.dead.get(id(tenantId, webhookId))?.size ?? 0;
  }

  async deadLetters(tenantId: string, webhookId: string, afterPosition: number, limit: number) {
    return [...(this.dead.get(id(tenantId, webhookId))?.values() ?? [])]
      .filter((d) => d.position > afterPosition)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit)
      .map((d) => ({ ...d }));
  }

  async pendingCount(w: EventWebhookRecord, cap: number, window: number) {
    const matching = this.log.between(w.tenantId, w.deliveredPosition, w.deliveredPosition + window).filter((e) => matches(w, e));
    return Math.min(cap, matching.length);
  }

  async replay(tenantId: string, webhookId: string, fromPosition: number, now: number) {
    const w = this.webhooks.get(id(tenantId, webhookId));
    // The claim is left as it is: a run under way finds the cursor moved and stops.
    if (!w || w.status !== 'active') return false;
    Object.assign(w, { deliveredPosition: fromPosition - 1, attempts: 0, nextAttemptAt: now });
    const dead = this.dead.get(id(tenantId, webhookId));
    for (const p of [...(dead?.keys() ?? [])]) if (p >= fromPosition) dead!.delete(p);
    return true;
  }

  async resume(tenantId: string, webhookId: string, now: number) {
    const w = this.webhooks.get(id(tenantId, webhookId));
    if (!w || w.status !== 'suspended') return false;
    Object.assign(w, { status: 'active', consecutiveDead: 0, attempts: 0, nextAttemptAt: now, suspendedAt: null, suspendedReason: null });
    return true;
  }

  async due(now: number, owner: string, limit: number) {
    return [...this.webhooks.values()]
      .filter(
        (w) =>
          w.status === 'active' &&
          w.nextAttemptAt <= now &&
          this.log.head(w.tenantId) > w.deliveredPosition &&
          this.claimable(w, now, owner),
      )
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
      .slice(0, limit)
      .map((w) => ({ tenantId: w.tenantId, webhookId: w.webhookId }));
  }

  async anyActive() {
    return [...this.webhooks.values()].some((w) => w.status === 'active');
  }

  async claim(tenantId: string, webhookId: string, owner: string, now: number, until: number) {
    const w = this.webhooks.get(id(tenantId, webhookId));
    if (!w || w.status !== 'active' || !this.claimable(w, now, owner)) return null;
    Object.assign(w, { claimOwner: owner, claimUntil: until });
    return { ...w };
  }

  async renew(c: EventWebhookClaim, until: number) {
    const w = this.fenced(c);
    if (w) w.claimUntil = until;
    return w !== null;
  }

  async release(c: EventWebhookClaim) {
    const w = this.webhooks.get(id(c.tenantId, c.webhookId));
    if (w && w.claimOwner === c.owner) Object.assign(w, { claimOwner: null, claimUntil: null });
  }

  async eventsAfter(w: EventWebhookRecord, afterPosition: number, limit: number, window: number): Promise<EventWebhookPage> {
    const scanned = this.log.between(w.tenantId, afterPosition, afterPosition + window);
    const extent = scanned.length > 0 ? scanned[scanned.length - 1].position : afterPosition;
    return { events: scanned.filter((e) => matches(w, e)).slice(0, limit), extent };
  }

  async advance(c: EventWebhookClaim, position: number, until: number) {
    const w = this.fenced(c);
    if (w) Object.assign(w, { deliveredPosition: position, attempts: 0, consecutiveDead: 0, claimUntil: until });
    return w !== null;
  }

  async attemptFailed(c: EventWebhookClaim, attempts: number, error: string, nextAttemptAt: number, now: number) {
    const w = this.fenced(c);
    if (w) Object.assign(w, { attempts, nextAttemptAt, lastError: error, lastErrorAt: now, claimOwner: null, claimUntil: null });
    return w !== null;
  }

  async deadLettered(
    c: EventWebhookClaim,
    event: { position: number; eventId: string },
    attempts: number,
    error: string,
    now: number,
    suspendAfter: number,
  ) {
    const w = this.fenced(c);
    if (!w) return false;
    const suspended = w.consecutiveDead + 1 >= suspendAfter;
    Object.assign(w, {
      deliveredPosition: event.position,
      attempts: 0,
      nextAttemptAt: now,
      lastError: error,
      lastErrorAt: now,
      consecutiveDead: w.consecutiveDead + 1,
      status: suspended ? 'suspended' : 'active',
      suspendedAt: suspended ? now : null,
      suspendedReason: suspended
        ? `DEAD_LETTERS: ${suspendAfter} events in a row were dead-lettered (the last: ${error})`.slice(0, 1000)
        : null,
      claimOwner: null,
      claimUntil: null,
    });
    const dead = this.dead.get(id(c.tenantId, c.webhookId)) ?? new Map<number, EventWebhookDeadLetter>();
    this.dead.set(id(c.tenantId, c.webhookId), dead);
    dead.set(event.position, { position: event.position, eventId: event.eventId, attempts, lastError: error, deadAt: now });
    return true;
  }

  private ofTenant(tenantId: string): EventWebhookRecord[] {
    return [...this.webhooks.values()].filter((w) => w.tenantId === tenantId);
  }

  /** No live claim, or the asker's own (CLAIMABLE). */
  private claimable(w: EventWebhookRecord, now: number, owner: string): boolean {
    return w.claimUntil === null || w.claimUntil < now || w.claimOwner === owner;
  }

  /** The row if a delivering instance's write may change it: still its claim, its cursor, active (FENCE). */
  private fenced(c: EventWebhookClaim): EventWebhookRecord | null {
    const w = this.webhooks.get(id(c.tenantId, c.webhookId));
    return w && w.claimOwner === c.owner && w.deliveredPosition === c.deliveredPosition && w.status === 'active' ? w : null;
  }
}
