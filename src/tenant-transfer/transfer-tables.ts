import { DomainError } from '../common/domain-error';
import { parseEventTags } from '../events/event-query';
import { TransferRow, TransferTableShape } from '../store/tenant-transfer.port';

/**
 * What an export carries, table by table (the one list: a table added by a migration needs one
 * entry here, in EXPORTED_TABLES or DERIVED_TABLES; a column needs none, rows travel with every
 * column, `SELECT *`). Each table is read with `tenant_id = ?` in primary key order, and written
 * in this order (keys after their tenant).
 */
export interface ExportedTable {
  name: string;
  /** Columns reset on import (instance-local or derived parts of an otherwise exported row). */
  onImport?: (row: Record<string, unknown>, ctx: ImportContext) => Record<string, unknown>;
  /** Rows of other (derived) tables the import makes for each row of this one. */
  alongside?: (row: Record<string, unknown>) => TransferRow[];
}

export interface ImportContext {
  /** The tenant's head position, from its tenant_heads line (written before the versions). */
  headPosition: number;
}

export const EXPORTED_TABLES: readonly ExportedTable[] = [
  { name: 'tenants' },
  { name: 'tenant_heads' },
  // Key hashes (never keys), revoked ones too, with every column other slices add (scopes, names, expiry).
  { name: 'api_keys' },
  { name: 'tenant_limits' },
  { name: 'streams' },
  // data and metadata are text columns: they travel as JSON strings, byte for byte, never parsed.
  // So do the tags (`tags`, the JSON array as appended, null when none); their index rows are made again.
  { name: 'events', alongside: tagRowsOf },
  // With the source archive and the compiled assembly (base64): imported as compiled, not recompiled.
  // A compile claim belongs to an instance of the source service: a pending upload is compiled again here.
  { name: 'uploads', onImport: (r) => ({ ...r, claim_owner: null, claim_until: null }) },
  { name: 'bindings' },
  {
    name: 'projections',
    alongside: (r) => [
      { table: 'notification_heads', row: { tenant_id: r.tenant_id, projection_id: r.projection_id } },
      // The rebuilt notification log would otherwise be delivered to the receiver again, from its start.
      ...(r.webhook_url
        ? [
            {
              table: 'webhook_suspensions',
              row: {
                tenant_id: r.tenant_id,
                projection_id: r.projection_id,
                resume_sequence: 1,
                reason: 'imported',
                suspended_at: Date.now(),
              },
            },
          ]
        : []),
    ],
  },
  {
    // Each version catches up again from position 0 up to the imported head (lanes are rebuilt).
    name: 'projection_versions',
    onImport: (r, ctx) => ({
      ...r,
      routed_position: 0,
      caught_up_at: null,
      target_position: Math.max(Number(r.target_position ?? 0), ctx.headPosition),
    }),
  },
  {
    // Event webhooks travel with their cursors, suspended like the projections' webhooks: the source
    // service may still be delivering them, and two services delivering one subscription would
    // repeat events. POST /event-webhooks/{id}/resume continues from the cursor.
    name: 'event_webhooks',
    onImport: (r) => ({
      ...r,
      claim_owner: null,
      claim_until: null,
      status: 'suspended',
      suspended_at: r.suspended_at ?? Date.now(),
      suspended_reason: r.status === 'suspended' ? r.suspended_reason : 'imported',
    }),
  },
  // Dead letters name the events a subscription gave up on: replay from a position still reaches them after a move.
  { name: 'event_webhook_dead_letters' },
];

/**
 * An event line's tag index rows (event_tags), from its `tags`. The tags must pass the append's own
 * rules (`parseEventTags`: count, length, characters, distinct): an edited export cannot bring in a
 * tag no append could have stored. The importer adds the line to a refusal.
 */
function tagRowsOf(r: Record<string, unknown>): TransferRow[] {
  if (r.tags === null || r.tags === undefined) return [];
  const refuse = (why: string) =>
    new DomainError('IMPORT_INVALID', `the tags of the event at position ${String(r.position)}: ${why}`, { position: r.position });
  if (typeof r.tags !== 'string') throw refuse('not the JSON text of an array');
  let tags: string[] | undefined;
  try {
    tags = parseEventTags(JSON.parse(r.tags));
  } catch (e) {
    throw refuse(e instanceof DomainError ? e.message : 'not JSON');
  }
  // Stored only when there are some ("[]" is never written: an event without tags has null).
  if (tags === undefined) throw refuse('an empty list is stored as no tags (null)');
  return tags.map((tag) => ({ table: 'event_tags', row: { tenant_id: r.tenant_id, tag, position: r.position } }));
}

/** Tables with tenant rows that an export leaves out, and why: derived state the import rebuilds, or secrets. */
export const DERIVED_TABLES: Readonly<Record<string, string>> = {
  snapshots: 'reducer state: folded again from the log on the first read or append of each aggregate',
  lanes: "projection states: rebuilt by each version's catch-up from position 0",
  lane_inbox: 'routing of events to lanes: rebuilt by the catch-up',
  notification_heads: 'sequence counters: a fresh row per imported projection',
  notifications: 'the notification log: written again by the rebuilt lanes',
  notification_states: 'the notification log texts: written again by the rebuilt lanes',
  webhook_deliveries: 'deliveries: the receivers had them; the import suspends each webhook instead (docs/operations.md)',
  webhook_suspensions: 'endpoint suspensions: each imported webhook starts suspended (reason imported)',
  dropped_versions: 'tombstones of dropped versions: their lanes were already purged',
  // Issue 24 item 3's table (its name as planned): retries are answered by the service that took them, not after a move.
  idempotency_keys: 'idempotent append records: a retry after a move is a new request',
  event_tags: 'the tag index (event-tags-schema.ts): made again on import from each event line’s `tags`',
  webhook_secrets: 'not transferred: the shared secret is generated again on first use; isolated ones are rotated (docs/operations.md)',
};

/**
 * Tables of this store's schema the export reads: EXPORTED_TABLES in order, then any tenant table
 * of neither list (named in `unclassified`: exported rather than lost, and a test fails until it is listed).
 */
export function exportPlan(shapes: TransferTableShape[]): { tables: TransferTableShape[]; unclassified: string[] } {
  const byName = new Map(shapes.map((s) => [s.name, s]));
  const listed = EXPORTED_TABLES.map((t) => byName.get(t.name)).filter((s): s is TransferTableShape => s !== undefined);
  const others = shapes.filter((s) => !(s.name in DERIVED_TABLES) && !EXPORTED_TABLES.some((t) => t.name === s.name));
  return { tables: [...listed, ...others], unclassified: others.map((s) => s.name) };
}

/** Whether an import takes rows of this table: a tenant table of this store that is not derived. */
export const importable = (name: string, shapes: Map<string, TransferTableShape>): boolean => shapes.has(name) && !(name in DERIVED_TABLES);

export const exportedTable = (name: string): ExportedTable | undefined => EXPORTED_TABLES.find((t) => t.name === name);
