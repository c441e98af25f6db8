import { DomainError } from '../../src/common/domain-error';
import { AppendBatcher } from '../../src/events/append-batcher';
import { decideAggregateType } from '../../src/store/append-plan';
import { AppendRequest, AppendResult, EventLog, Snapshot, SnapshotChange, StoredEvent } from '../../src/store/event-log.port';
import { Binding, SnapshotRepository } from '../../src/store/reducer-state.port';
import { BindingLookup } from '../../src/reducers/aggregate-binder';
import { AggregateStateKeeper } from '../../src/reducers/aggregate-state-keeper';
import { Folded, FoldInput, ReducerRunner } from '../../src/reducers/reducer-runner';

/**
 * Fakes of the keeper's ports over one in-memory log: the batcher commits like the store (the type
 * rule, STATE_STALE when the snapshot's base is not the stream's version, the snapshot written with
 * the events; a `refusal` answered after those checks, storing nothing), the runner counts events
 * into `{"n":…}` and fails on an event of type `Boom` as a deadline or a crash does (no host
 * account), on `Withdrawn` while n < 2 as a reducer that throws (the host's APPLY_FAILED), and on
 * `Huge` as the host's size check (STATE_TOO_LARGE).
 */
export class World {
  readonly streams = new Map<string, { type: string; events: StoredEvent[] }>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly bindings = new Map<string, Binding>();
  readonly folds: { aggregateId: string; bindingId: string; state: string | null; versions: number[] }[] = [];
  readonly reads = { streamInfo: 0, snapshotGet: 0 };
  commits = 0;
  /** What each commit was asked (the keeper's request, as the group commit gets it). */
  readonly requests: AppendRequest[] = [];
  /** Aggregates erased (epoch ms), as the store's erasure leaves them: no snapshot, appends refused. */
  readonly erased = new Map<string, number>();
  /** Set to hold folds until opened. */
  foldGate?: Promise<void>;
  tooLarge = false;
  private position = 0;

  bind(aggregateType: string): Binding {
    const b: Binding = {
      tenantId: 't',
      aggregateType,
      reducerId: `r-${aggregateType}`,
      className: 'R',
      bindingId: `b-${aggregateType}-${this.bindings.size}`,
      boundAt: 1,
    };
    this.bindings.set(aggregateType, b);
    return b;
  }

  /** An event another instance (or an unbound append) wrote: the keeper has not seen it. */
  appendElsewhere(aggregateId: string, type: string, eventType = 'Other'): void {
    const s = this.streams.get(aggregateId) ?? { type, events: [] };
    this.streams.set(aggregateId, s);
    s.events.push(this.stored(aggregateId, type, eventType, s.events.length + 1, '{}', 1));
  }

  readonly log = {
    streamInfo: async (_t: string, aggregateId: string) => {
      this.reads.streamInfo++;
      const s = this.streams.get(aggregateId);
      const erasedAt = this.erased.get(aggregateId);
      return s ? { aggregateType: s.type, version: s.events.length, ...(erasedAt !== undefined ? { erasedAt } : {}) } : null;
    },
    readStream: async (_t: string, aggregateId: string, fromVersion: number, limit: number) =>
      (this.streams.get(aggregateId)?.events ?? []).filter((e) => e.version >= fromVersion).slice(0, limit),
  } as unknown as EventLog;

  readonly snapshotRepo = {
    get: async (_t: string, aggregateId: string) => {
      this.reads.snapshotGet++;
      return this.snapshots.get(aggregateId) ?? null;
    },
    putIfNewer: async (_t: string, s: Snapshot) => void this.snapshots.set(s.aggregateId, s),
  } as unknown as SnapshotRepository;

  readonly lookup = { current: async (_t: string, type: string) => this.bindings.get(type) ?? null } as unknown as BindingLookup;

  readonly runner = {
    fold: async (_t: string, binding: Binding, input: FoldInput): Promise<Folded> => {
      const aggregateId = input.events[0]?.aggregateId;
      this.folds.push({ aggregateId, bindingId: binding.bindingId, state: input.state, versions: input.events.map((e) => e.version) });
      await this.foldGate;
      let n = input.state === null ? 0 : (JSON.parse(input.state) as { n: number }).n;
      for (const e of input.events) {
        if (e.eventType === 'Boom')
          return {
            state: JSON.stringify({ n }),
            failedVersion: e.version,
            error: this.tooLarge ? 'STATE_TOO_LARGE: 2 MB' : 'REDUCER_FAILED: boom',
            // A failure the host gives no item code for (the append goes ahead, held), with its details.
            ...(this.tooLarge
              ? {}
              : {
                  failure: {
                    exceptionType: 'System.InvalidOperationException',
                    eventType: e.eventType,
                    version: e.version,
                    frames: [{ method: 'Bank.R.Apply', file: 'R.cs', line: 7 }],
                  },
                }),
          };
        if (e.eventType === 'Withdrawn' && n < 2) {
          const failure = {
            code: 'APPLY_FAILED' as const,
            message: 'insufficient funds',
            exceptionType: 'System.InvalidOperationException',
            stackTrace: '   at Host.Internal()',
          };
          return { state: JSON.stringify({ n }), failedVersion: e.version, error: 'APPLY_FAILED: insufficient funds', failure };
        }
        if (e.eventType === 'Huge') {
          const failure = { code: 'STATE_TOO_LARGE' as const, message: 'the state is 2000000 bytes', limit: 1_048_576 };
          return { state: JSON.stringify({ n }), failedVersion: e.version, error: 'STATE_TOO_LARGE: the state is 2000000 bytes', failure };
        }
        n++;
      }
      return { state: JSON.stringify({ n }) };
    },
  } as unknown as ReducerRunner;

  /** The group commit's checks of one request, as the store makes them (a transaction member's: with no snapshot when unbound). */
  private check(req: AppendRequest): string {
    const s = this.streams.get(req.aggregateId);
    const type = decideAggregateType(req, s?.type);
    if (type instanceof DomainError) throw type;
    if (this.erased.has(req.aggregateId)) throw new DomainError('AGGREGATE_ERASED', 'erased');
    const version = s?.events.length ?? 0;
    if (req.snapshot && req.snapshot.baseVersion !== version) throw new DomainError('STATE_STALE', 'stale');
    if (req.refusal) throw new DomainError(req.refusal.code, req.refusal.message, req.refusal.details);
    return type;
  }

  readonly batcher = {
    append: async (req: AppendRequest & { timestamp: number; snapshot: SnapshotChange }): Promise<AppendResult> => {
      this.commits++;
      this.requests.push(req);
      this.check(req);
      return this.apply(req);
    },
    /** All or none: every member checked before any is stored; a failure names its aggregate. */
    appendTransaction: async (members: AppendRequest[]): Promise<AppendResult[]> => {
      this.commits++;
      this.requests.push(...members);
      for (const m of members) {
        try {
          this.check(m);
        } catch (e) {
          const d = e as DomainError;
          throw new DomainError(d.code, d.message, { ...d.details, aggregateId: m.aggregateId });
        }
      }
      return members.map((m) => this.apply(m));
    },
  } as unknown as AppendBatcher;

  private apply(req: AppendRequest): AppendResult {
    {
      const s = this.streams.get(req.aggregateId);
      const type = this.check(req);
      const version = s?.events.length ?? 0;
      const stream = s ?? { type, events: [] };
      this.streams.set(req.aggregateId, stream);
      const events = req.events.map((e, i) => this.stored(req.aggregateId, type, e.eventType, version + i + 1, e.data, req.timestamp ?? 0));
      stream.events.push(...events);
      const last = events[events.length - 1].version;
      if (!req.snapshot) return { aggregateId: req.aggregateId, aggregateType: type, events };
      this.snapshots.set(req.aggregateId, {
        aggregateId: req.aggregateId,
        aggregateType: type,
        bindingId: req.snapshot.bindingId,
        version: last,
        state: req.snapshot.state,
        failedVersion: req.snapshot.failedVersion ?? null,
        error: req.snapshot.error ?? null,
        updatedAt: req.timestamp ?? 0,
      });
      return { aggregateId: req.aggregateId, aggregateType: type, events };
    }
  }

  keeper(): AggregateStateKeeper {
    return new AggregateStateKeeper(this.log, this.snapshotRepo, this.lookup, this.runner, this.batcher, 100, () => 1_000);
  }

  private stored(
    aggregateId: string,
    aggregateType: string,
    eventType: string,
    version: number,
    data: string,
    timestamp: number,
  ): StoredEvent {
    return {
      position: ++this.position,
      eventId: `e${this.position}`,
      aggregateId,
      aggregateType,
      eventType,
      version,
      timestamp,
      data,
      metadata: null,
      correlationId: null,
      causationId: null,
    };
  }
}

export const append = (aggregateId: string, eventTypes: string[], more: Partial<AppendRequest> = {}): AppendRequest => ({
  tenantId: 't',
  aggregateId,
  inferredType: aggregateId.split('-')[0],
  events: eventTypes.map((eventType) => ({ eventType, data: '{"x":1}' })),
  ...more,
});
