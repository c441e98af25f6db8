import { EventWebhookClaims } from './event-webhook-claims.port';
import { EventWebhookSubscriptions } from './event-webhook-subscriptions.port';
import { EventDbRow, EVENT_COLUMNS, toStoredEvent } from './event-row';
import { EventWebhookClaim, EventWebhookDeadLetter, EventWebhookPage, EventWebhookRecord, NewEventWebhook } from './event-webhook-records';
import { serializedBy } from './sql-dialect';
import { SqlDialect, SqlRunner } from './sql-runner';
import { EventQuery } from './event-log.port';
import { eventQueryPredicate } from './event-query-predicate';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const list = (v: string | null): string[] | null => (v === null ? null : (JSON.parse(v) as string[]));

function toRecord(r: any): EventWebhookRecord {
  return {
    tenantId: r.tenant_id,
    webhookId: r.webhook_id,
    name: r.name ?? null,
    url: r.url,
    aggregateTypes: list(r.aggregate_types ?? null),
    eventTypes: list(r.event_types ?? null),
    query: r.query === null || r.query === undefined ? null : (JSON.parse(r.query) as EventQuery),
    status: r.status,
    deliveredPosition: Number(r.delivered_position),
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error ?? null,
    lastErrorAt: num(r.last_error_at),
    consecutiveDead: Number(r.consecutive_dead),
    suspendedAt: num(r.suspended_at),
    suspendedReason: r.suspended_reason ?? null,
    createdAt: Number(r.created_at),
    claimOwner: r.claim_owner ?? null,
    claimUntil: num(r.claim_until),
  };
}

const PK = 'tenant_id = ? AND webhook_id = ?';
/** A delivering instance's writes: still its claim, still the cursor it read, still active. */
const FENCE = `${PK} AND claim_owner = ? AND delivered_position = ? AND status = 'active'`;
const fence = (c: EventWebhookClaim) => [c.tenantId, c.webhookId, c.owner, c.deliveredPosition];
/** No live claim, or the asker's own. Parameters: now, owner. */
const CLAIMABLE = '(claim_until IS NULL OR claim_until < ? OR claim_owner = ?)';

/** 32-bit FNV-1a: the advisory lock that serialises one tenant's creations (the cap check and the insert). */
function tenantLock(tenantId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tenantId.length; i++) h = Math.imul(h ^ tenantId.charCodeAt(i), 0x01000193);
  // Apart from the other advisory locks' keys (small constants and webhook hashes): a collision only makes two writers wait.
  return (h | 0) * 2 + 7_340_033;
}

/** `AND column IN (?, …)` for a filter, nothing for none. */
function inList(column: string, values: string[] | null): { sql: string; params: string[] } {
  if (values === null) return { sql: '', params: [] };
  return { sql: ` AND ${column} IN (${values.map(() => '?').join(', ')})`, params: values };
}

/** A subscription's filters as one predicate on `events`: the type lists AND its DCB query (issue 28). */
function filterOf(w: EventWebhookRecord, dialect: SqlDialect): { sql: string; params: string[] } {
  const parts = [inList('aggregate_type', w.aggregateTypes), inList('event_type', w.eventTypes)];
  if (w.query !== null) parts.push(eventQueryPredicate(w.query, dialect));
  return { sql: parts.map((p) => p.sql).join(''), params: parts.flatMap((p) => p.params) };
}

export class SqlEventWebhookRepository implements EventWebhookSubscriptions, EventWebhookClaims {
  constructor(private readonly db: SqlRunner) {}

  async create(w: NewEventWebhook, limit: number): Promise<boolean> {
    // Count and insert in one statement, serialised per tenant (PostgreSQL: two creations at once
    // under READ COMMITTED would both count below the limit; SQLite: the write lock does it).
    return this.db.batch([
      ...serializedBy(this.db.dialect, tenantLock(w.tenantId)),
      {
        sql: `INSERT INTO event_webhooks (tenant_id, webhook_id, name, url, aggregate_types, event_types, query, status, delivered_position,
                attempts, next_attempt_at, consecutive_dead, created_at)
              SELECT ?, ?, ?, ?, ?, ?, ?, 'active', CAST(? AS bigint), 0, CAST(? AS bigint), 0, CAST(? AS bigint)
              WHERE CAST(? AS bigint) = 0 OR (SELECT COUNT(*) FROM event_webhooks WHERE tenant_id = ?) < CAST(? AS bigint)`,
        params: [
          w.tenantId,
          w.webhookId,
          w.name,
          w.url,
          w.aggregateTypes === null ? null : JSON.stringify(w.aggregateTypes),
          w.eventTypes === null ? null : JSON.stringify(w.eventTypes),
          w.query === null ? null : JSON.stringify(w.query),
          w.afterPosition,
          w.createdAt,
          w.createdAt,
          limit,
          w.tenantId,
          limit,
        ],
        mustChange: true,
      },
    ]);
  }

  async count(tenantId: string): Promise<number> {
    const [r] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM event_webhooks WHERE tenant_id = ?', [tenantId]);
    return Number(r?.n ?? 0);
  }

  async get(tenantId: string, webhookId: string): Promise<EventWebhookRecord | null> {
    const [r] = await this.db.all(`SELECT * FROM event_webhooks WHERE ${PK}`, [tenantId, webhookId]);
    return r ? toRecord(r) : null;
  }

  async list(tenantId: string): Promise<EventWebhookRecord[]> {
    const rows = await this.db.all('SELECT * FROM event_webhooks WHERE tenant_id = ? ORDER BY created_at, webhook_id', [tenantId]);
    return rows.map(toRecord);
  }

  async delete(tenantId: string, webhookId: string): Promise<boolean> {
    return this.db.batch([
      { sql: `DELETE FROM event_webhook_dead_letters WHERE ${PK}`, params: [tenantId, webhookId] },
      { sql: `DELETE FROM event_webhooks WHERE ${PK}`, params: [tenantId, webhookId], mustChange: true },
    ]);
  }

  async headPosition(tenantId: string): Promise<number> {
    const [r] = await this.db.all<{ position: number }>('SELECT position FROM tenant_heads WHERE tenant_id = ?', [tenantId]);
    return Number(r?.position ?? 0);
  }

  async deadCount(tenantId: string, webhookId: string): Promise<number> {
    const [r] = await this.db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM event_webhook_dead_letters WHERE ${PK}`, [tenantId, webhookId]);
    return Number(r?.n ?? 0);
  }

  async deadLetters(tenantId: string, webhookId: string, afterPosition: number, limit: number): Promise<EventWebhookDeadLetter[]> {
    const rows = await this.db.all<any>(
      `SELECT position, event_id, attempts, last_error, dead_at FROM event_webhook_dead_letters
       WHERE ${PK} AND position > ? ORDER BY position LIMIT ?`,
      [tenantId, webhookId, afterPosition, limit],
    );
    return rows.map((r) => ({
      position: Number(r.position),
      eventId: r.event_id,
      attempts: Number(r.attempts),
      lastError: r.last_error ?? null,
      deadAt: Number(r.dead_at),
    }));
  }

  async pendingCount(w: EventWebhookRecord, cap: number, window: number): Promise<number> {
    const f = filterOf(w, this.db.dialect);
    // Bounded twice (matches counted, positions looked at): a status read on a long backlog with a rare filter stays cheap.
    const [r] = await this.db.all<{ n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM events WHERE tenant_id = ? AND position > ? AND position <= ?${f.sql} LIMIT ?) AS pending`,
      [w.tenantId, w.deliveredPosition, w.deliveredPosition + window, ...f.params, cap],
    );
    return Number(r?.n ?? 0);
  }

  async replay(tenantId: string, webhookId: string, fromPosition: number, now: number): Promise<boolean> {
    return this.db.batch([
      {
        // The claim is left as it is: a run under way finds the cursor moved (its fenced writes change nothing) and stops.
        sql: `UPDATE event_webhooks SET delivered_position = ?, attempts = 0, next_attempt_at = ?
              WHERE ${PK} AND status = 'active'`,
        params: [fromPosition - 1, now, tenantId, webhookId],
        mustChange: true,
      },
      { sql: `DELETE FROM event_webhook_dead_letters WHERE ${PK} AND position >= ?`, params: [tenantId, webhookId, fromPosition] },
    ]);
  }

  async resume(tenantId: string, webhookId: string, now: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE event_webhooks SET status = 'active', consecutive_dead = 0, attempts = 0, next_attempt_at = ?,
         suspended_at = NULL, suspended_reason = NULL
       WHERE ${PK} AND status = 'suspended'`,
      [now, tenantId, webhookId],
    );
    return changed > 0;
  }

  async due(now: number, owner: string, limit: number): Promise<{ tenantId: string; webhookId: string }[]> {
    // Every tenant's (by design: the poll of one instance); the join keeps subscriptions with nothing to deliver out.
    const rows = await this.db.all<{ tenant_id: string; webhook_id: string }>(
      `SELECT w.tenant_id, w.webhook_id FROM event_webhooks w JOIN tenant_heads h ON h.tenant_id = w.tenant_id
       WHERE w.status = 'active' AND w.next_attempt_at <= ? AND h.position > w.delivered_position
         AND (w.claim_until IS NULL OR w.claim_until < ? OR w.claim_owner = ?)
       ORDER BY w.next_attempt_at LIMIT ?`,
      [now, now, owner, limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, webhookId: r.webhook_id }));
  }

  async anyActive(): Promise<boolean> {
    // Every tenant's (by design: one cheap probe per poll, the index event_webhooks_due is on active rows).
    const rows = await this.db.all<{ one: number }>("SELECT 1 AS one FROM event_webhooks WHERE status = 'active' LIMIT 1", []);
    return rows.length > 0;
  }

  async claim(tenantId: string, webhookId: string, owner: string, now: number, until: number): Promise<EventWebhookRecord | null> {
    // The claimability is checked in the UPDATE itself: on PostgreSQL a second claimer waits for the
    // first's row lock, re-reads the row, finds the claim live and changes nothing; SQLite writes are serial.
    const won = await this.db.run(
      `UPDATE event_webhooks SET claim_owner = ?, claim_until = ? WHERE ${PK} AND status = 'active' AND ${CLAIMABLE}`,
      [owner, until, tenantId, webhookId, now, owner],
    );
    if (won === 0) return null;
    const row = await this.get(tenantId, webhookId);
    return row && row.claimOwner === owner && row.status === 'active' ? row : null;
  }

  async renew(c: EventWebhookClaim, until: number): Promise<boolean> {
    return (await this.db.run(`UPDATE event_webhooks SET claim_until = ? WHERE ${FENCE}`, [until, ...fence(c)])) > 0;
  }

  async release(c: EventWebhookClaim): Promise<void> {
    await this.db.run(`UPDATE event_webhooks SET claim_owner = NULL, claim_until = NULL WHERE ${PK} AND claim_owner = ?`, [
      c.tenantId,
      c.webhookId,
      c.owner,
    ]);
  }

  async eventsAfter(w: EventWebhookRecord, afterPosition: number, limit: number, window: number): Promise<EventWebhookPage> {
    // The extent first, then the events up to it: positions commit in order per tenant, so nothing
    // can still appear at or below an extent once read, and a cursor moved to it skips no event.
    const [x] = await this.db.all<{ extent: number | null }>(
      'SELECT MAX(position) AS extent FROM events WHERE tenant_id = ? AND position > ? AND position <= ?',
      [w.tenantId, afterPosition, afterPosition + window],
    );
    const extent = x?.extent === null || x?.extent === undefined ? afterPosition : Number(x.extent);
    if (extent === afterPosition) return { events: [], extent };
    const f = filterOf(w, this.db.dialect);
    const rows = await this.db.all<EventDbRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = ? AND position > ? AND position <= ?${f.sql}
       ORDER BY position LIMIT ?`,
      [w.tenantId, afterPosition, extent, ...f.params, limit],
    );
    return { events: rows.map(toStoredEvent), extent };
  }

  async advance(c: EventWebhookClaim, position: number, until: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE event_webhooks SET delivered_position = ?, attempts = 0, consecutive_dead = 0, claim_until = ? WHERE ${FENCE}`,
      [position, until, ...fence(c)],
    );
    return changed > 0;
  }

  async attemptFailed(c: EventWebhookClaim, attempts: number, error: string, nextAttemptAt: number, now: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE event_webhooks SET attempts = ?, next_attempt_at = ?, last_error = ?, last_error_at = ?, claim_owner = NULL, claim_until = NULL
       WHERE ${FENCE}`,
      [attempts, nextAttemptAt, error, now, ...fence(c)],
    );
    return changed > 0;
  }

  async deadLettered(
    c: EventWebhookClaim,
    event: { position: number; eventId: string },
    attempts: number,
    error: string,
    now: number,
    suspendAfter: number,
  ): Promise<boolean> {
    const reason = `DEAD_LETTERS: ${suspendAfter} events in a row were dead-lettered (the last: ${error})`.slice(0, 1000);
    return this.db.batch([
      {
        // SET expressions read the row as it was: consecutive_dead + 1 is this dead letter's count.
        sql: `UPDATE event_webhooks SET delivered_position = ?, attempts = 0, next_attempt_at = ?, last_error = ?, last_error_at = ?,
                consecutive_dead = consecutive_dead + 1,
                status = CASE WHEN consecutive_dead + 1 >= ? THEN 'suspended' ELSE 'active' END,
                suspended_at = CASE WHEN consecutive_dead + 1 >= ? THEN CAST(? AS bigint) ELSE NULL END,
                suspended_reason = CASE WHEN consecutive_dead + 1 >= ? THEN CAST(? AS text) ELSE NULL END,
                claim_owner = NULL, claim_until = NULL
              WHERE ${FENCE}`,
        params: [event.position, now, error, now, suspendAfter, suspendAfter, now, suspendAfter, reason, ...fence(c)],
        mustChange: true,
      },
      {
        sql: `INSERT INTO event_webhook_dead_letters (tenant_id, webhook_id, position, event_id, attempts, last_error, dead_at)
              VALUES (?, ?, ?, ?, ?, ?, ?)
              ON CONFLICT (tenant_id, webhook_id, position) DO UPDATE SET attempts = excluded.attempts, last_error = excluded.last_error,
                dead_at = excluded.dead_at`,
        params: [c.tenantId, c.webhookId, event.position, event.eventId, attempts, error, now],
      },
    ]);
  }
}
