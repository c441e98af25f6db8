import { DomainError } from '../common/domain-error';
import { AppendBatcher } from '../events/append-batcher';
import { decideAggregateType } from '../store/append-plan';
import { AppendRequest, AppendResult, EventLog, Snapshot, SnapshotChange, StoredEvent } from '../store/event-log.port';
import { Binding, SnapshotRepository } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { Folded, FoldInput, ReducerRunner } from './reducer-runner';
import { elapse, until } from '../../test/support/wait';

/** The tenant frames the scripted fold reports for a throwing 'Boom'. */
const BOOM_FRAMES = [{ method: 'Bank.R.Apply', file: 'R.cs', line: 7 }];
/** What a 'Boom' at version 2 (position 2) adds to stateError and to the state read's details. */
const BOOM_AT_2 = { exceptionType: 'System.InvalidOperationException', eventType: 'Boom', version: 2, position: 2, frames: BOOM_FRAMES };

/**
 * Fakes of the keeper's ports over one in-memory log: the batcher commits like the store (the type
 * rule, STATE_STALE when the snapshot's base is not the stream's version, the snapshot written with
 * the events), the runner counts events into `{"n":…}` and fails on an event of type `Boom`.
 */
class World {
  readonly streams = new Map<string, { type: string; events: StoredEvent[] }>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly bindings = new Map<string, Binding>();
  readonly folds: { aggregateId: string; bindingId: string; state: string | null; versions: number[] }[] = [];
  readonly reads = { streamInfo: 0, snapshotGet: 0 };
  commits = 0;
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
            ...(this.tooLarge
              ? {}
              : {
                  failure: {
                    exceptionType: 'System.InvalidOperationException',
                    eventType: e.eventType,
                    version: e.version,
                    frames: BOOM_FRAMES,
                  },
                }),
          };
        n++;
      }
      return { state: JSON.stringify({ n }) };
    },
  } as unknown as ReducerRunner;

  readonly batcher = {
    append: async (req: AppendRequest & { timestamp: number; snapshot: SnapshotChange }): Promise<AppendResult> => {
      this.commits++;
      const s = this.streams.get(req.aggregateId);
      const type = decideAggregateType(req, s?.type);
      if (type instanceof DomainError) throw type;
      if (this.erased.has(req.aggregateId)) throw new DomainError('AGGREGATE_ERASED', 'erased');
      const version = s?.events.length ?? 0;
      if (req.snapshot.baseVersion !== version) throw new DomainError('STATE_STALE', 'stale');
      const stream = s ?? { type, events: [] };
      this.streams.set(req.aggregateId, stream);
      const events = req.events.map((e, i) => this.stored(req.aggregateId, type, e.eventType, version + i + 1, e.data, req.timestamp));
      stream.events.push(...events);
      const last = events[events.length - 1].version;
      this.snapshots.set(req.aggregateId, {
        aggregateId: req.aggregateId,
        aggregateType: type,
        bindingId: req.snapshot.bindingId,
        version: last,
        state: req.snapshot.state,
        failedVersion: req.snapshot.failedVersion ?? null,
        error: req.snapshot.error ?? null,
        updatedAt: req.timestamp,
      });
      return { aggregateId: req.aggregateId, aggregateType: type, events };
    },
  } as unknown as AppendBatcher;

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

const append = (aggregateId: string, eventTypes: string[], more: Partial<AppendRequest> = {}): AppendRequest => ({
  tenantId: 't',
  aggregateId,
  inferredType: aggregateId.split('-')[0],
  events: eventTypes.map((eventType) => ({ eventType, data: '{"x":1}' })),
  ...more,
});

const stateOf = (o: Awaited<ReturnType<AggregateStateKeeper['append']>>) => (o?.state ? JSON.parse(o.state.text) : undefined);

describe('AggregateStateKeeper', () => {
  describe('an erased aggregate', () => {
    it('answers AGGREGATE_ERASED to reads and appends, drops the state it cached, and folds no tombstone', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      // Erased by another instance: this keeper's cache still holds the state.
      w.erased.set('account-1', 5_000);
      w.snapshots.delete('account-1');
      await expect(keeper.read('t', 'account', 'account-1')).rejects.toMatchObject({ code: 'AGGREGATE_ERASED' });
      const folds = w.folds.length;
      await expect(keeper.append(append('account-1', ['Deposited']))).rejects.toMatchObject({ code: 'AGGREGATE_ERASED' });
      expect(w.folds).toHaveLength(folds); // the read dropped the cached state: nothing to fold from, the stream says erased
      expect(w.commits).toBe(1);
      // The same when an append is the first to meet the erasure (the cached state goes with the refusal).
      await keeper.append(append('account-2', ['Opened']));
      w.erased.set('account-2', 5_000);
      w.snapshots.delete('account-2');
      await expect(keeper.append(append('account-2', ['Deposited']))).rejects.toMatchObject({ code: 'AGGREGATE_ERASED' });
      const after = w.folds.length;
      await expect(keeper.append(append('account-2', ['Deposited']))).rejects.toMatchObject({ code: 'AGGREGATE_ERASED' });
      expect(w.folds).toHaveLength(after);
    });
  });

  describe('one aggregate at a time', () => {
    it('folds the second of two concurrent appends of an aggregate from the first one’s state', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      let open!: () => void;
      w.foldGate = new Promise((r) => (open = r));
      const first = keeper.append(append('account-1', ['Opened']));
      const second = keeper.append(append('account-1', ['Deposited', 'Deposited']));
      await elapse(10, 'time for the second append to fold, which it must not before the first');
      expect(w.folds).toHaveLength(1); // the second waits for the aggregate's turn
      open();
      const [a, b] = await Promise.all([first, second]);
      expect(w.folds[1]).toMatchObject({ state: '{"n":1}', versions: [2, 3] });
      expect(stateOf(a)).toEqual({ n: 1 });
      expect(stateOf(b)).toEqual({ n: 3 });
      expect(b?.result.events.map((e) => e.version)).toEqual([2, 3]);
    });

    it('does not make another aggregate wait for it', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      let open!: () => void;
      w.foldGate = new Promise((r) => (open = r));
      const held = keeper.append(append('account-1', ['Opened']));
      await until(
        () => w.folds.length,
        (n) => n >= 1,
        5_000,
        'account-1 folding',
      );
      const other = keeper.append(append('account-2', ['Opened']));
      await until(
        () => w.folds.length,
        (n) => n >= 2,
        5_000,
        'account-2 folding beside it',
      );
      expect(w.folds.map((f) => f.aggregateId)).toEqual(['account-1', 'account-2']);
      open();
      await Promise.all([held, other]);
    });
  });

  describe('the snapshot cache', () => {
    it('starts the next append from the cached state, reading neither the snapshot nor the stream again', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      const reads = { ...w.reads };
      w.snapshots.clear(); // a read of the snapshot store would now start from nothing
      const next = await keeper.append(append('account-1', ['Deposited']));
      expect(w.reads).toEqual(reads);
      expect(w.folds[1]).toMatchObject({ state: '{"n":1}', versions: [2] });
      expect(stateOf(next)).toEqual({ n: 2 });
    });

    it('recomputes from the log when the store refuses the cached state as stale (events appended elsewhere)', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      w.appendElsewhere('account-1', 'account');
      const next = await keeper.append(append('account-1', ['Deposited']));
      // Refused once (cached base 1, stream at 2), then the missing event is folded from the log first.
      expect(w.folds.slice(1).map((f) => f.versions)).toEqual([[2], [2], [3]]);
      expect(stateOf(next)).toEqual({ n: 3 });
      expect(next?.result.events[0].version).toBe(3);
    });

    it('does not use a snapshot made under another binding: the stream is folded again under the new one', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened', 'Deposited']));
      const rebound = w.bind('account');
      const next = await keeper.append(append('account-1', ['Deposited']));
      expect(w.folds.slice(1)).toEqual([
        { aggregateId: 'account-1', bindingId: rebound.bindingId, state: null, versions: [1, 2] },
        { aggregateId: 'account-1', bindingId: rebound.bindingId, state: '{"n":2}', versions: [3] },
      ]);
      expect(stateOf(next)).toEqual({ n: 3 });
    });

    it('gives up with STATE_STALE when the aggregate keeps changing under it', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      const fold = w.runner.fold.bind(w.runner);
      // Every fold is overtaken by another instance's append.
      (w.runner as { fold: ReducerRunner['fold'] }).fold = async (t, b, input) => {
        const f = await fold(t, b, input);
        w.appendElsewhere('account-1', 'account');
        return f;
      };
      await expect(keeper.append(append('account-1', ['Opened']))).rejects.toMatchObject({ code: 'STATE_STALE' });
      expect(w.commits).toBe(3); // tried three times, each from a state brought up to date
    });
  });

  describe('the aggregate type (decideAggregateType)', () => {
    it('folds with the stored type’s reducer when none is given, not the one inferred from the id', async () => {
      const w = new World();
      const cart = w.bind('cart');
      w.bind('order');
      w.appendElsewhere('order-1', 'cart');
      await w.keeper().append(append('order-1', ['Added']));
      expect(w.folds.map((f) => f.bindingId)).toEqual([cart.bindingId, cart.bindingId]);
    });

    it('leaves a given type other than the stored one to the group commit, without a fold', async () => {
      const w = new World();
      w.bind('cart');
      w.bind('invoice');
      w.appendElsewhere('order-1', 'cart');
      const outcome = await w.keeper().append(append('order-1', ['Added'], { aggregateType: 'invoice' }));
      expect(outcome).toBeUndefined();
      expect(w.folds).toEqual([]);
    });

    it('gives a new stream the given type, else the inferred one', async () => {
      const w = new World();
      const invoice = w.bind('invoice');
      const order = w.bind('order');
      const keeper = w.keeper();
      await keeper.append(append('order-1', ['Placed'], { aggregateType: 'invoice' }));
      await keeper.append(append('order-2', ['Placed']));
      expect(w.folds.map((f) => f.bindingId)).toEqual([invoice.bindingId, order.bindingId]);
    });

    it('reads a stream’s type once: later appends of it do not read the stream row', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      await keeper.append(append('account-1', ['Deposited']));
      await keeper.append(append('account-1', ['Deposited']));
      expect(w.reads.streamInfo).toBe(1);
    });

    it('takes no part in an append of a type no reducer is bound to', async () => {
      const w = new World();
      w.bind('account');
      expect(await w.keeper().append(append('order-1', ['Placed']))).toBeUndefined();
      expect(w.folds).toEqual([]);
      expect(w.streams.size).toBe(0);
    });
  });

  describe('a reducer failure', () => {
    it('stores the events with the state before the failing event, and answers REDUCER_FAILED at its version', async () => {
      const w = new World();
      w.bind('account');
      const outcome = await w.keeper().append(append('account-1', ['Opened', 'Boom', 'Deposited']));
      expect(outcome?.result.events.map((e) => e.version)).toEqual([1, 2, 3]);
      expect(outcome?.state).toBeUndefined();
      // With the fold's failure details; position: the failing event's, known once committed.
      expect(outcome?.stateError).toEqual({ code: 'REDUCER_FAILED', message: 'REDUCER_FAILED: boom', failedVersion: 2, ...BOOM_AT_2 });
      expect(w.snapshots.get('account-1')).toMatchObject({ version: 3, state: '{"n":1}', failedVersion: 2, error: 'REDUCER_FAILED: boom' });
    });

    it('holds the aggregate at the failing event: later appends are stored without a fold', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Boom']));
      const later = await keeper.append(append('account-1', ['Deposited']));
      expect(w.folds).toHaveLength(1);
      expect(later?.result.events[0].version).toBe(2);
      expect(later?.stateError).toMatchObject({ code: 'REDUCER_FAILED', failedVersion: 1 });
      expect(w.snapshots.get('account-1')).toMatchObject({ version: 2, failedVersion: 1 });
    });

    it("carries the failure's exception, event and frames to later appends and the state read, its message untouched", async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened', 'Boom']));
      const later = await keeper.append(append('account-1', ['Deposited']));
      expect(later?.stateError).toEqual({ code: 'REDUCER_FAILED', message: 'REDUCER_FAILED: boom', failedVersion: 2, ...BOOM_AT_2 });
      const read = (await keeper.read('t', 'account', 'account-1').catch((e: unknown) => e)) as DomainError;
      expect([read.message.startsWith('the reducer failed at version 2'), read.details]).toEqual([
        true,
        { failedVersion: 2, reducerError: 'REDUCER_FAILED: boom', ...BOOM_AT_2 },
      ]);
    });

    it('answers STATE_TOO_LARGE when the host refused the state for its size', async () => {
      const w = new World();
      w.bind('account');
      w.tooLarge = true;
      const outcome = await w.keeper().append(append('account-1', ['Boom']));
      expect(outcome?.stateError).toMatchObject({ code: 'STATE_TOO_LARGE', failedVersion: 1 });
    });
  });
});
