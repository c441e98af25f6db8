import { AggregateStateKeeper } from './aggregate-state-keeper';
import { DomainError } from '../common/domain-error';
import { ReducerRunner } from './reducer-runner';
import { elapse, until } from '../../test/support/wait';
import { append, World } from '../../test/support/keeper-world';

/** The tenant frames the scripted fold reports for a throwing 'Boom'. */
const BOOM_FRAMES = [{ method: 'Bank.R.Apply', file: 'R.cs', line: 7 }];
/** What a 'Boom' at version 2 (position 2) adds to stateError and to the state read's details. */
const BOOM_AT_2 = { exceptionType: 'System.InvalidOperationException', eventType: 'Boom', version: 2, position: 2, frames: BOOM_FRAMES };

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
        { failedVersion: 2, reducerError: 'REDUCER_FAILED: boom', eventId: 'e2', ...BOOM_AT_2 },
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

  describe('a multi-aggregate transaction (POST /events/transaction)', () => {
    const tx = (...members: ReturnType<typeof append>[]) => members.map((m) => ({ ...m, transaction: { id: 'tx', size: members.length } }));

    it("folds each bound member on its own state, commits all together, and answers each one's state", async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened', 'Deposited']));
      const out = await keeper.appendTransaction(
        tx(append('account-1', ['Deposited']), append('memo-1', ['Noted']), append('account-2', ['Opened'])),
      );
      expect(out?.map((o) => [o.result.aggregateId, stateOf(o)])).toEqual([
        ['account-1', { n: 3 }],
        ['memo-1', undefined],
        ['account-2', { n: 1 }],
      ]);
      expect(w.commits).toBe(2); // the first append, then the transaction as one commit
      expect(w.requests.slice(1).map((r) => [r.aggregateId, r.snapshot?.baseVersion])).toEqual([
        ['account-1', 2],
        ['memo-1', undefined],
        ['account-2', 0],
      ]);
    });

    it('takes no part when no member has a reducer', async () => {
      const w = new World();
      w.bind('account');
      expect(await w.keeper().appendTransaction(tx(append('memo-1', ['A']), append('memo-2', ['B'])))).toBeUndefined();
    });

    it('recomputes the whole transaction when one member was stale (appended elsewhere)', async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      await keeper.append(append('account-2', ['Opened']));
      w.appendElsewhere('account-2', 'account');
      const out = await keeper.appendTransaction(tx(append('account-1', ['Deposited']), append('account-2', ['Deposited'])));
      expect(out?.map((o) => stateOf(o))).toEqual([{ n: 2 }, { n: 3 }]);
      expect(w.commits).toBe(4); // two appends, the refused transaction, its retry
      expect(w.streams.get('account-1')?.events.map((e) => e.version)).toEqual([1, 2]); // stored once
    });

    it("refuses the whole transaction when one member's reducer refuses, naming that aggregate", async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      await keeper.append(append('account-1', ['Opened']));
      const refused = keeper.appendTransaction(tx(append('account-1', ['Deposited']), append('account-2', ['Withdrawn'])));
      await expect(refused).rejects.toMatchObject({ code: 'REDUCER_REJECTED', details: { aggregateId: 'account-2' } });
      expect(w.streams.get('account-1')?.events).toHaveLength(1);
      expect(w.streams.has('account-2')).toBe(false);
    });

    it("holds every member's aggregate: a single append to one of them folds after the transaction", async () => {
      const w = new World();
      w.bind('account');
      const keeper = w.keeper();
      let open!: () => void;
      w.foldGate = new Promise((r) => (open = r));
      const both = keeper.appendTransaction(tx(append('account-1', ['Opened']), append('account-2', ['Opened'])));
      await until(
        () => w.folds.length,
        (n) => n >= 2,
        5_000,
        'both members folding',
      );
      const single = keeper.append(append('account-2', ['Deposited']));
      await elapse(10, 'time for the single append to fold, which it must not before the transaction commits');
      expect(w.folds).toHaveLength(2);
      open();
      const [, after] = await Promise.all([both, single]);
      expect(stateOf(after)).toEqual({ n: 2 });
    });
  });
});
