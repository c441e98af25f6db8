import { EventQuery, StoredEvent } from './event-log.port';

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
  /** The DCB query (docs/dcb.md), AND-ed with the type lists; null: no query filter. */
  query: EventQuery | null;
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
  query: EventQuery | null;
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
