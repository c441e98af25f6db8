import { idempotencyKeyOf, RememberedKey } from './append-plan';
import { EVENT_COLUMNS, EventDbRow, toStoredEvent } from './event-row';

/**
 * The columns a look-up of remembered idempotency keys reads: the key's row joined to the events it
 * names (alias k for the key, e for the events). One statement gives a replay everything it answers.
 */
export const REMEMBERED_KEY_COLUMNS = `k.tenant_id AS key_tenant_id, k.idem_key, k.request_hash, k.outcome, ${EVENT_COLUMNS.split(', ')
  .map((c) => `e.${c}`)
  .join(', ')}`;

/** The join of a key to its events; both stores have an index on events (tenant_id, position). */
export const REMEMBERED_KEY_JOIN =
  'idempotency_keys k JOIN events e ON e.tenant_id = k.tenant_id AND e.position BETWEEN k.first_position AND k.last_position';

export interface RememberedKeyRow extends EventDbRow {
  key_tenant_id: string;
  idem_key: string;
  request_hash: string;
  outcome: string | null;
}

/** Rows (ordered by position within each key) → remembered keys by idempotencyKeyOf. */
export function rememberedKeys(rows: RememberedKeyRow[], into = new Map<string, RememberedKey>()): Map<string, RememberedKey> {
  for (const r of rows) {
    const id = idempotencyKeyOf(r.key_tenant_id, r.idem_key);
    let k = into.get(id);
    if (!k) into.set(id, (k = { requestHash: r.request_hash, outcome: r.outcome, events: [] }));
    k.events.push(toStoredEvent(r));
  }
  return into;
}
