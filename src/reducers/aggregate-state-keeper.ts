import { Injectable, Optional } from '@nestjs/common';
import { aggregateErased, DomainError, notFound } from '../common/domain-error';
import { KeyedMutex } from '../common/keyed-mutex';
import { LruMap } from '../common/lru-map';
import { RawJson } from '../common/raw-json';
import { uuidv7 } from '../common/uuid-v7';
import { AppendBatcher } from '../events/append-batcher';
import { AppendOutcomeWithState, StatefulAppend } from '../events/stateful-append.port';
import { decideAggregateType, streamKey } from '../store/append-plan';
import { AppendRequest, AppendResult, EventLog, Snapshot, SnapshotChange, StreamInfo } from '../store/event-log.port';
import { Binding, SnapshotRepository } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { failureDetails, Folded, ReducerRunner } from './reducer-runner';
import { refusalOf } from './reducer-refusal';
import { toWireEvent } from '../tenant-code/wire-event';
import { inReducerSpan } from '../observability/tracing/spans';
import { RuntimeFailure } from '../tenant-code/runtime-failure';
import { Kind, Prepared } from './prepared-append';

/** The state an append starts from: a snapshot's content at a version. */
interface Base {
  version: number;
  state: string | null;
  failedVersion: number | null;
  error: string | null;
}

/**
 * The code a held aggregate answers with. The stored error starts with the host's item code (or the
 * service's failure code), never with tenant text, so a state the host refused as too large reads
 * as such; every other failure is the reducer's.
 */
export function stateErrorCode(error: string | null | undefined): 'STATE_TOO_LARGE' | 'REDUCER_FAILED' {
  return error?.startsWith('STATE_TOO_LARGE:') ? 'STATE_TOO_LARGE' : 'REDUCER_FAILED';
}

const failureKey = (stream: string, binding: Binding, failedVersion: number) => `${stream}\u0000${binding.bindingId}\u0000${failedVersion}`;

const REPLAY_PAGE = 1000;
const MAX_STALE_RETRIES = 3;

export interface AggregateStateView {
  aggregateId: string;
  aggregateType: string;
  version: number;
  /** The state's JSON text as the reducer's host wrote it. */
  state: RawJson;
  lastModified: number;
}

/**
 * Keeps each aggregate's state current at O(1) per append: the latest snapshot (cached, bounded)
 * plus only the new events through the reducer, written with the events in one commit. An
 * aggregate's appends are serialised here so each state is computed from the previous one;
 * different aggregates still share group commits. A snapshot from another binding, or behind the
 * stream (events appended while unbound, or by another instance), is brought up to date from the
 * log first — the store refuses a state computed on a stale version (STATE_STALE).
 */
@Injectable()
export class AggregateStateKeeper implements StatefulAppend {
  private readonly cache: LruMap<string, Snapshot>;
  private readonly mutex = new KeyedMutex();
  /** Aggregate types never change once fixed, so this cache cannot go stale. */
  private readonly types = new LruMap<string, string>(100_000);
  /**
   * A held aggregate's failure details (exception type, event, tenant frames) by aggregate, binding and
   * failed version: the snapshot row keeps only the code and message, so these last as long as this
   * instance remembers them (a read elsewhere or after a restart answers without them).
   */
  private readonly failures = new LruMap<string, RuntimeFailure>(10_000);

  constructor(
    private readonly events: EventLog,
    private readonly snapshots: SnapshotRepository,
    private readonly binder: BindingLookup,
    private readonly runner: ReducerRunner,
    private readonly batcher: AppendBatcher,
    // Tests' tuning; Nest provides neither, so the defaults apply.
    @Optional() cacheSize: number = 50_000,
    @Optional() private readonly now: () => number = Date.now,
  ) {
    this.cache = new LruMap(cacheSize);
  }

  async append(req: AppendRequest): Promise<AppendOutcomeWithState | undefined> {
    const kind = await this.kindOf(req);
    if (!kind) return undefined;
    return this.mutex.run(kind.key, async () => {
      for (let attempt = 0; attempt < MAX_STALE_RETRIES; attempt++) {
        const prepared = await this.prepare(req, kind, attempt);
        try {
          const result = await this.batcher.append(prepared.request);
          // A replay stored nothing: the pipeline answers the remembered outcome, and the cache keeps what it had.
          return result.replay ? { result } : this.settled(prepared, result);
        } catch (e) {
          if (e instanceof DomainError && e.code === 'STATE_STALE') {
            this.cache.delete(kind.key);
            continue;
          }
          // Erased on another instance: the state this one still held goes too.
          if (e instanceof DomainError && e.code === 'AGGREGATE_ERASED') this.cache.delete(kind.key);
          throw e;
        }
      }
      throw new DomainError('STATE_STALE', 'the aggregate kept changing while its state was computed; retry');
    });
  }

  /**
   * A multi-aggregate transaction (POST /events/transaction): each bound member's state computed as
   * for a single append, every member's aggregate held at once (KeyedMutex.runAll), all committed
   * together; a stale base on any member recomputes the whole transaction. undefined: no member's
   * type has a reducer (plain group commit).
   */
  async appendTransaction(members: AppendRequest[]): Promise<AppendOutcomeWithState[] | undefined> {
    const kinds = await Promise.all(members.map((m) => this.kindOf(m)));
    if (kinds.every((k) => !k)) return undefined;
    const keys = kinds.flatMap((k) => (k ? [k.key] : []));
    return this.mutex.runAll(keys, async () => {
      for (let attempt = 0; attempt < MAX_STALE_RETRIES; attempt++) {
        const prepared = await Promise.all(members.map((m, i) => (kinds[i] ? this.prepare(m, kinds[i], attempt, true) : undefined)));
        const requests = members.map((m, i) => prepared[i]?.request ?? m);
        // The states of every member are remembered with the transaction's key, on its first member.
        if (members[0].idempotency) {
          const remembered = prepared.map((p) => (p ? JSON.parse(p.remembered) : null) as unknown);
          requests[0] = { ...requests[0], idempotency: { ...members[0].idempotency, outcome: JSON.stringify({ members: remembered }) } };
        }
        try {
          const results = await this.batcher.appendTransaction(requests);
          if (results[0].replay) return results.map((result) => ({ result }));
          return results.map((result, i) => (prepared[i] ? this.settled(prepared[i], result) : { result }));
        } catch (e) {
          if (e instanceof DomainError && (e.code === 'STATE_STALE' || e.code === 'AGGREGATE_ERASED'))
            keys.forEach((k) => this.cache.delete(k));
          if (e instanceof DomainError && e.code === 'STATE_STALE') continue;
          throw e;
        }
      }
      throw new DomainError('STATE_STALE', 'the aggregates kept changing while their states were computed; retry');
    });
  }

  /** The request's aggregate type and the binding of its reducer, or undefined when none applies. */
  private async kindOf(req: AppendRequest): Promise<Kind | undefined> {
    const key = streamKey(req.tenantId, req.aggregateId);
    // The stream's row is read at most once here: for its type (unless cached) and, on the first
    // attempt, for the version a snapshot is caught up to. Read before the aggregate's turn, it may
    // be behind by then: a state computed on it is refused (STATE_STALE) and the retry reads again.
    let info: Promise<StreamInfo | null> | undefined;
    const stream = () => (info ??= this.events.streamInfo(req.tenantId, req.aggregateId));
    const cached = this.types.get(key);
    const stored = cached ?? (await stream())?.aggregateType;
    if (cached === undefined && stored !== undefined) this.types.set(key, stored); // a hit is not written again
    const type = decideAggregateType(req, stored);
    // Not this stream's type: the group commit refuses it (AGGREGATE_TYPE_MISMATCH) without a fold.
    if (type instanceof DomainError) return undefined;
    const binding = await this.binder.current(req.tenantId, type);
    return binding ? { key, type, binding, stream } : undefined;
  }

  /** The request with its events' ids, the state folded on its base, and the refusal when the reducer refused. */
  private async prepare(req: AppendRequest, kind: Kind, attempt: number, inTransaction = false): Promise<Prepared> {
    const { key, type, binding } = kind;
    const base = await this.base(req.tenantId, req.aggregateId, type, binding, attempt > 0, attempt > 0 ? undefined : kind.stream);
    const timestamp = this.now();
    const events = req.events.map((e) => ({ ...e, eventId: e.eventId ?? uuidv7(timestamp) }));
    const folded = await this.foldNew(req, binding, base, events, type, timestamp);
    // The reducer threw on one of these events (or outgrew the cap): the commit refuses the whole
    // request after its own checks (a replay answers first; a stale base is recomputed).
    const refusal = refusalOf(folded, events, base.version);
    const snapshot: SnapshotChange = {
      bindingId: binding.bindingId,
      baseVersion: base.version,
      state: folded.state,
      ...(folded.failedVersion !== undefined ? { failedVersion: folded.failedVersion, error: folded.error } : {}),
    };
    const failure =
      folded.failedVersion !== undefined
        ? (failureDetails(folded.failure) ?? this.failureOf(key, binding, folded.failedVersion))
        : undefined;
    const stateError =
      folded.failedVersion !== undefined
        ? {
            code: stateErrorCode(folded.error),
            message: folded.error ?? 'the reducer failed',
            failedVersion: folded.failedVersion,
            ...failure,
          }
        : undefined;
    // The answer's state is remembered with an idempotency key, so that a replay answers it again.
    const remembered = JSON.stringify(stateError ? { stateError } : { state: folded.state });
    const idempotency = req.idempotency && { ...req.idempotency, outcome: remembered };
    // In a transaction the refusal names its aggregate: the whole transaction answers it.
    const refused = refusal && {
      code: refusal.code,
      message: refusal.message,
      details: { ...refusal.details, ...(inTransaction ? { aggregateId: req.aggregateId } : {}) },
    };
    const request = { ...req, events, timestamp, snapshot, idempotency, ...(refused ? { refusal: refused } : {}) };
    return { key, binding, request, folded, failure, stateError, remembered };
  }

  /** After the commit: the failing event's position, the caches, and the answer. */
  private settled(p: Prepared, result: AppendResult): AppendOutcomeWithState {
    const { key, binding, folded, failure, stateError } = p;
    const last = result.events[result.events.length - 1];
    // The failing event's position is known once committed (when it is one of these events).
    const failedEvent = stateError && result.events.find((e) => e.version === stateError.failedVersion);
    if (stateError && failedEvent) stateError.position = failedEvent.position;
    // Only the RuntimeFailure fields: code and message are the snapshot's, and a read's error body has its own.
    if (stateError && failure)
      this.failures.set(failureKey(key, binding, stateError.failedVersion), { ...failure, position: stateError.position });
    this.types.set(key, result.aggregateType); // fixed now: the next append need not read it
    this.cache.set(key, {
      aggregateId: p.request.aggregateId,
      aggregateType: result.aggregateType,
      bindingId: binding.bindingId,
      version: last.version,
      state: folded.state,
      failedVersion: folded.failedVersion ?? null,
      error: folded.error ?? null,
      updatedAt: last.timestamp,
    });
    return stateError ? { result, stateError } : { result, state: new RawJson(folded.state) };
  }

  /** GET /aggregate-types/{type}/{id}/state: always the state at the aggregate's current version. */
  async read(tenantId: string, aggregateType: string, aggregateId: string): Promise<AggregateStateView> {
    const binding = await this.binder.current(tenantId, aggregateType);
    if (!binding) throw new DomainError('NO_REDUCER_BOUND', `no reducer is bound to aggregate type '${aggregateType}'`, { aggregateType });
    const info = await this.events.streamInfo(tenantId, aggregateId);
    if (!info || info.aggregateType !== aggregateType) throw notFound(`aggregate '${aggregateId}' of type '${aggregateType}'`);
    const key = streamKey(tenantId, aggregateId);
    if (info.erasedAt !== undefined) {
      this.cache.delete(key);
      throw aggregateErased(aggregateId, info.erasedAt);
    }
    const snap = await this.mutex.run(key, async () => {
      const stored = await this.snapshots.get(tenantId, aggregateId);
      if (stored && stored.bindingId === binding.bindingId && stored.version === info.version) return stored;
      const fresh = await this.catchUpFrom(tenantId, aggregateId, aggregateType, binding, stored);
      await this.snapshots.putIfNewer(tenantId, fresh);
      this.cache.set(key, fresh);
      return fresh;
    });
    if (snap.failedVersion !== null) {
      const code = stateErrorCode(snap.error);
      const what = code === 'STATE_TOO_LARGE' ? 'the state became too large' : 'the reducer failed';
      // The event it failed on, so the answer names it (one indexed row, on this path only).
      const [failed] = await this.events.readStream(tenantId, aggregateId, snap.failedVersion, 1);
      const event = failed?.version === snap.failedVersion ? { eventId: failed.eventId, eventType: failed.eventType } : {};
      throw new DomainError(code, `${what} at version ${snap.failedVersion}: ${snap.error}; bind a fixed reducer to recompute`, {
        failedVersion: snap.failedVersion,
        reducerError: snap.error,
        ...event,
        // `version` is the failed event's (the runtime failure's shape); the details when this instance has them.
        version: snap.failedVersion,
        ...this.failureOf(key, binding, snap.failedVersion),
      });
    }
    return { aggregateId, aggregateType, version: snap.version, state: new RawJson(snap.state), lastModified: snap.updatedAt };
  }

  /** Recomputes from scratch under `binding` (catch-up after a bind). */
  recompute(tenantId: string, aggregateId: string, aggregateType: string, binding: Binding): Promise<Snapshot> {
    return this.catchUpFrom(tenantId, aggregateId, aggregateType, binding, null);
  }

  /** The failure details this instance remembers of a held aggregate (none: only code and message are known). */
  private failureOf(key: string, binding: Binding, failedVersion: number): RuntimeFailure | undefined {
    return this.failures.get(failureKey(key, binding, failedVersion));
  }

  erased(tenantId: string, aggregateId: string): void {
    this.cache.delete(streamKey(tenantId, aggregateId));
  }

  forget(tenantId: string, aggregateType: string): void {
    this.cache.deleteWhere((_k, v) => v.aggregateType === aggregateType && _k.startsWith(`${tenantId}\u0000`));
  }

  /** `stream`: the stream's row as this append already read it (a retry reads it again). */
  private async base(
    tenantId: string,
    aggregateId: string,
    type: string,
    binding: Binding,
    fresh: boolean,
    stream: () => Promise<StreamInfo | null> = () => this.events.streamInfo(tenantId, aggregateId),
  ): Promise<Base> {
    const key = streamKey(tenantId, aggregateId);
    let snap: Snapshot | undefined = fresh ? undefined : this.cache.get(key);
    if (!snap) snap = (await this.snapshots.get(tenantId, aggregateId)) ?? undefined;
    if (snap && snap.bindingId === binding.bindingId && !fresh) return snap;
    // No usable snapshot, or the store said ours is behind: bring it up to the stream's version.
    const info = await stream();
    if (!info) return { version: 0, state: null, failedVersion: null, error: null };
    // No fold over tombstones: the commit would refuse it anyway.
    if (info.erasedAt !== undefined) throw aggregateErased(aggregateId, info.erasedAt);
    const usable = snap && snap.bindingId === binding.bindingId ? snap : null;
    if (usable && usable.version === info.version) return usable;
    const caught = await this.catchUpFrom(tenantId, aggregateId, type, binding, usable);
    this.cache.set(key, caught);
    return caught;
  }

  /** Applies the log after `from` (or the whole log) and returns the resulting snapshot. */
  private async catchUpFrom(
    tenantId: string,
    aggregateId: string,
    aggregateType: string,
    binding: Binding,
    from: Snapshot | null,
  ): Promise<Snapshot> {
    let state: Base = from && from.bindingId === binding.bindingId ? from : { version: 0, state: null, failedVersion: null, error: null };
    let updatedAt = from?.updatedAt ?? 0;
    for (;;) {
      const page = await this.events.readStream(tenantId, aggregateId, state.version + 1, REPLAY_PAGE);
      if (page.length === 0) break;
      const last = page[page.length - 1];
      updatedAt = last.timestamp;
      if (state.failedVersion === null) {
        const f = await this.runner.fold(tenantId, binding, { state: state.state, events: page.map(toWireEvent) });
        if (f.failedVersion !== undefined && f.failure) {
          const position = page.find((e) => e.version === f.failedVersion)?.position;
          this.failures.set(failureKey(streamKey(tenantId, aggregateId), binding, f.failedVersion), {
            ...failureDetails(f.failure),
            position,
          });
        }
        state = { version: last.version, state: f.state, failedVersion: f.failedVersion ?? null, error: f.error ?? null };
      } else {
        state = { ...state, version: last.version };
      }
      if (page.length < REPLAY_PAGE) break;
    }
    return {
      aggregateId,
      aggregateType,
      bindingId: binding.bindingId,
      version: state.version,
      state: state.state ?? '{}',
      failedVersion: state.failedVersion,
      error: state.error,
      updatedAt,
    };
  }

  private async foldNew(
    req: AppendRequest,
    binding: Binding,
    base: Base,
    events: { eventType: string; data: string; eventId?: string; tags?: string[] }[],
    type: string,
    timestamp: number,
  ): Promise<Folded> {
    if (base.failedVersion !== null) {
      // Held on the failing event until a fixed reducer is bound: later events are not applied.
      return { state: base.state ?? '{}', failedVersion: base.failedVersion, error: base.error ?? 'the reducer failed' };
    }
    const wire = events.map((e, i) =>
      toWireEvent({
        eventId: e.eventId!,
        aggregateId: req.aggregateId,
        aggregateType: type,
        eventType: e.eventType,
        version: base.version + i + 1,
        timestamp,
        data: e.data,
        metadata: req.metadata ?? null,
        correlationId: req.correlationId ?? null,
        causationId: req.causationId ?? null,
        tags: e.tags,
      }),
    );
    return inReducerSpan(req.tenantId, binding.reducerId, wire.length, () =>
      this.runner.fold(req.tenantId, binding, { state: base.state, events: wire }),
    );
  }
}
