import { aggregateTypeMismatch, DomainError, versionConflict } from '../common/domain-error';
import { uuidv7 } from '../common/uuid-v7';
import { AppendOutcome, AppendRequest, Snapshot, StoredEvent, StreamInfo } from './event-log.port';

export const streamKey = (tenantId: string, aggregateId: string): string => `${tenantId}\u0000${aggregateId}`;

export interface EventRow extends StoredEvent {
  tenantId: string;
}

export interface StreamWrite {
  tenantId: string;
  aggregateId: string;
  aggregateType: string;
  version: number;
}

/** A snapshot the commit writes, with the tenant it belongs to. */
export interface SnapshotWrite extends Snapshot {
  tenantId: string;
}

export interface AppendPlan {
  outcomes: AppendOutcome[];
  /** Snapshots of the accepted requests that carried one (the last per aggregate wins). */
  snapshots: SnapshotWrite[];
  rows: EventRow[];
  /** Final version of every stream the plan touches. */
  streams: StreamWrite[];
  /** Final head position of every tenant the plan touches. */
  heads: Map<string, number>;
}

/**
 * The part of a group commit that is the same on every store: given the current versions and
 * head positions (read under the transaction's locks), decide each request on its own, in
 * arrival order, and number what is accepted. Pure, so the adapters only do I/O.
 */
export function planAppends(
  requests: AppendRequest[],
  current: Map<string, StreamInfo>,
  heads: Map<string, number>,
  now: number,
): AppendPlan {
  const streams = new Map<string, StreamWrite>();
  const snapshots = new Map<string, SnapshotWrite>();
  const nextHeads = new Map(heads);
  const rows: EventRow[] = [];
  const outcomes: AppendOutcome[] = [];

  for (const req of requests) {
    const key = streamKey(req.tenantId, req.aggregateId);
    const known = streams.get(key) ?? current.get(key);
    const version = known?.version ?? 0;
    if (known && req.aggregateType !== undefined && req.aggregateType !== known.aggregateType) {
      outcomes.push({ ok: false, error: aggregateTypeMismatch(req.aggregateType, known.aggregateType) });
      continue;
    }
    if (req.expectedVersion !== undefined && req.expectedVersion !== version) {
      outcomes.push({ ok: false, error: versionConflict(req.expectedVersion, version) });
      continue;
    }
    if (req.snapshot && req.snapshot.baseVersion !== version) {
      outcomes.push({ ok: false, error: new DomainError('STATE_STALE', 'the aggregate moved on while its state was computed', { actualVersion: version }) });
      continue;
    }
    const aggregateType = known?.aggregateType ?? req.aggregateType ?? req.inferredType;
    let position = nextHeads.get(req.tenantId) ?? 0;
    const events: StoredEvent[] = [];
    let v = version;
    for (const e of req.events) {
      const row: EventRow = {
        tenantId: req.tenantId,
        position: ++position,
        eventId: e.eventId ?? uuidv7(now),
        aggregateId: req.aggregateId,
        aggregateType,
        eventType: e.eventType,
        version: ++v,
        timestamp: req.timestamp ?? now,
        data: e.data,
        metadata: req.metadata ?? null,
        correlationId: req.correlationId ?? null,
        causationId: req.causationId ?? null,
      };
      rows.push(row);
      events.push(row);
    }
    nextHeads.set(req.tenantId, position);
    streams.set(key, { tenantId: req.tenantId, aggregateId: req.aggregateId, aggregateType, version: v });
    if (req.snapshot) {
      const sn = req.snapshot;
      snapshots.set(key, {
        tenantId: req.tenantId,
        aggregateId: req.aggregateId,
        aggregateType,
        bindingId: sn.bindingId,
        version: v,
        state: sn.state,
        failedVersion: sn.failedVersion ?? null,
        error: sn.error ?? null,
        updatedAt: req.timestamp ?? now,
      });
    }
    outcomes.push({ ok: true, result: { aggregateId: req.aggregateId, aggregateType, events } });
  }
  const touchedHeads = new Map<string, number>();
  for (const [tenantId, pos] of nextHeads) if (pos !== heads.get(tenantId)) touchedHeads.set(tenantId, pos);
  return { outcomes, rows, streams: [...streams.values()], heads: touchedHeads, snapshots: [...snapshots.values()] };
}

/** Distinct tenants of a batch, sorted: locks are always taken in this order so writers never deadlock. */
export function tenantsOf(requests: AppendRequest[]): string[] {
  return [...new Set(requests.map((r) => r.tenantId))].sort();
}

/** Appends keep timestamps non-decreasing per process even if the wall clock steps back. */
export class MonotonicClock {
  private last = 0;
  now(): number {
    const t = Date.now();
    this.last = t > this.last ? t : this.last;
    return this.last;
  }
}
