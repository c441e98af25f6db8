import { EventWebhookClaim, EventWebhookPage, EventWebhookRecord } from './event-webhook-records';

/**
 * The event webhooks' delivery side: `due` (the dispatchers' poll over every tenant's active
 * subscriptions), claims, the filtered page of the log, and the fenced writes of an attempt's
 * outcome. Writes made while delivering are fenced by the claim owner and the cursor read
 * (EventWebhookClaim): a write of an instance whose claim lapsed, or of a run overtaken by a
 * replay or a delete, changes nothing. Called by EventWebhookDispatcher; adapters
 * SqlEventWebhookRepository (store.eventWebhooks).
 */
export abstract class EventWebhookClaims {
  abstract get(tenantId: string, webhookId: string): Promise<EventWebhookRecord | null>;
  /** Active subscriptions due by `now` whose tenant has events after their cursor, unclaimed or claimed by `owner` (all tenants). */
  abstract due(now: number, owner: string, limit: number): Promise<{ tenantId: string; webhookId: string }[]>;
  /** Whether any tenant has an active event webhook (the dispatcher's poll: while none has, appends wake nothing). */
  abstract anyActive(): Promise<boolean>;
  /** Claims it for `owner` until `until` if it is active and unclaimed (or the claim lapsed, or is the owner's): the row, else null. */
  abstract claim(tenantId: string, webhookId: string, owner: string, now: number, until: number): Promise<EventWebhookRecord | null>;
  /** The claim extended (false: lost it, or the cursor moved under it). */
  abstract renew(c: EventWebhookClaim, until: number): Promise<boolean>;
  abstract release(c: EventWebhookClaim): Promise<void>;
  /**
   * Not EventLog.readLog: a subscription must also learn how far it may move its cursor when no
   * event in the window matches its filters (`extent`), which a page of matching events cannot say.
   * Events after `afterPosition` within the next `window` positions matching the filters, at most `limit`.
   */
  abstract eventsAfter(w: EventWebhookRecord, afterPosition: number, limit: number, window: number): Promise<EventWebhookPage>;
  /** After a 2xx (or a scan that found only filtered-out events): the cursor to `position`, attempts 0, claim extended. */
  abstract advance(c: EventWebhookClaim, position: number, until: number): Promise<boolean>;
  /** A failed attempt with more to come: counted, due at `nextAttemptAt`, the claim let go. */
  abstract attemptFailed(c: EventWebhookClaim, attempts: number, error: string, nextAttemptAt: number, now: number): Promise<boolean>;
  /**
   * The retry schedule is exhausted: the event becomes a dead letter and the cursor passes it, in
   * one transaction; the `suspendAfter`-th dead letter in a row suspends the subscription. The claim is let go.
   */
  abstract deadLettered(
    c: EventWebhookClaim,
    event: { position: number; eventId: string },
    attempts: number,
    error: string,
    now: number,
    suspendAfter: number,
  ): Promise<boolean>;
}
