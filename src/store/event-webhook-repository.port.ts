import { StoredEvent } from './event-log.port';

/** One event webhook (a subscription to the tenant's log delivered to a URL), as stored. */
export interface EventWebhookRecord {
  tenantId: string;
  webhookId: string;
  name: string | null;
  url: string;
  /** null: every aggregate type. */
  aggregateTypes: string[] | null;
  /** null: every event type. */
  eventTypes: string[] | null;
  status: 'active' | 'suspended';
  /** Every matching event at or below it is delivered or dead-lettered. */
  deliveredPosition: number;
  /** Failed attempts of the next matching event (0 after every success or dead letter). */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Dead letters in a row (0 after a success); at the service's threshold the subscription is suspended. */
  consecutiveDead: number;
  suspendedAt: number | null;
  suspendedReason: string | null;
  createdAt: number;
  claimOwner: string | null;
  claimUntil: number | null;
}

export interface NewEventWebhook {
  tenantId: string;
  webhookId: string;
  name: string | null;
  url: string;
  aggregateTypes: string[] | null;
  eventTypes: string[] | null;
  afterPosition: number;
  createdAt: number;
}

export interface EventWebhookDeadLetter {
  position: number;
  eventId: string;
  attempts: number;
  lastError: string | null;
  deadAt: number;
}

/** What the dispatcher is told a claim holds: the subscription and the fence its writes carry. */
export interface EventWebhookClaim {
  tenantId: string;
  webhookId: string;
  owner: string;
  /** The cursor the claimant read; every write is guarded by it (a replay or delete in between wins). */
  deliveredPosition: number;
}

/** A page of the log for one subscription: the matching events, and how far the scan looked. */
export interface EventWebhookPage {
  events: StoredEvent[];
  /**
   * The last position that exists in the scanned window (the cursor itself when none): with no
   * matching event in the page, every event up to it was filtered out and the cursor may move there.
   */
  extent: number;
}

/**
 * The event webhooks' store (src/event-webhooks). Every statement is per tenant but `due`, the
 * dispatchers' poll over every tenant's active subscriptions. Writes made while delivering are
 * fenced by the claim owner and the cursor read (EventWebhookClaim): a write of an instance whose
 * claim lapsed, or of a run overtaken by a replay or a delete, changes nothing.
 */
export interface EventWebhookRepository {
  /** Inserts unless the tenant already has `limit` subscriptions (0: no limit): false then. */
  create(w: NewEventWebhook, limit: number): Promise<boolean>;
  count(tenantId: string): Promise<number>;
  get(tenantId: string, webhookId: string): Promise<EventWebhookRecord | null>;
  list(tenantId: string): Promise<EventWebhookRecord[]>;
  /** The subscription and its dead letters; false when there was none. */
  delete(tenantId: string, webhookId: string): Promise<boolean>;
  /** The tenant's last position (0 before its first event). */
  headPosition(tenantId: string): Promise<number>;
  deadCount(tenantId: string, webhookId: string): Promise<number>;
  deadLetters(tenantId: string, webhookId: string, afterPosition: number, limit: number): Promise<EventWebhookDeadLetter[]>;
  /** Matching events after the cursor among the next `window` positions, counted up to `cap`. */
  pendingCount(w: EventWebhookRecord, cap: number, window: number): Promise<number>;
  /**
   * Cursor back to `fromPosition - 1`, due now, its dead letters from `fromPosition` on removed
   * (they are delivered again); only while active. False when none or suspended.
   */
  replay(tenantId: string, webhookId: string, fromPosition: number, now: number): Promise<boolean>;
  /** Suspended → active, due now, from its cursor. False when none or not suspended. */
  resume(tenantId: string, webhookId: string, now: number): Promise<boolean>;

  // The dispatcher's side.
  /** Active subscriptions due by `now` whose tenant has events after their cursor, unclaimed or claimed by `owner` (all tenants). */
  due(now: number, owner: string, limit: number): Promise<{ tenantId: string; webhookId: string }[]>;
  /** Whether any tenant has an active event webhook (the dispatcher's poll: while none has, appends wake nothing). */
  anyActive(): Promise<boolean>;
  /** Claims it for `owner` until `until` if it is active and unclaimed (or the claim lapsed, or is the owner's): the row, else null. */
  claim(tenantId: string, webhookId: string, owner: string, now: number, until: number): Promise<EventWebhookRecord | null>;
  /** The claim extended (false: lost it, or the cursor moved under it). */
  renew(c: EventWebhookClaim, until: number): Promise<boolean>;
  release(c: EventWebhookClaim): Promise<void>;
  /**
   * Not EventLog.readLog: a subscription must also learn how far it may move its cursor when no
   * event in the window matches its filters (`extent`), which a page of matching events cannot say.
   * Events after `afterPosition` within the next `window` positions matching the filters, at most `limit`.
   */
  eventsAfter(w: EventWebhookRecord, afterPosition: number, limit: number, window: number): Promise<EventWebhookPage>;
  /** After a 2xx (or a scan that found only filtered-out events): the cursor to `position`, attempts 0, claim extended. */
  advance(c: EventWebhookClaim, position: number, until: number): Promise<boolean>;
  /** A failed attempt with more to come: counted, due at `nextAttemptAt`, the claim let go. */
  attemptFailed(c: EventWebhookClaim, attempts: number, error: string, nextAttemptAt: number, now: number): Promise<boolean>;
  /**
   * The retry schedule is exhausted: the event becomes a dead letter and the cursor passes it, in
   * one transaction; the `suspendAfter`-th dead letter in a row suspends the subscription. The claim is let go.
   */
  deadLettered(
    c: EventWebhookClaim,
    event: { position: number; eventId: string },
    attempts: number,
    error: string,
    now: number,
    suspendAfter: number,
  ): Promise<boolean>;
}
