import { DomainError } from '../common/domain-error';
import { append, World } from '../../test/support/keeper-world';
import { refusalOf } from './reducer-refusal';

const stateOf = (o: Awaited<ReturnType<ReturnType<World['keeper']>['append']>>) => (o?.state ? JSON.parse(o.state.text) : undefined);

describe('refusalOf', () => {
  const events = [
    { eventType: 'Deposited', eventId: 'e-1' },
    { eventType: 'Withdrawn', eventId: 'e-2' },
  ];
  const failure = { code: 'APPLY_FAILED' as const, message: 'no', exceptionType: 'X.Y', stackTrace: 'at Secret()' };

  it('refuses a throw on one of the append’s events, naming it, and passes the host’s fields through without its stack trace', () => {
    const e = refusalOf({ state: '{}', failedVersion: 7, error: 'APPLY_FAILED: no', failure }, events, 5);
    expect(e).toBeInstanceOf(DomainError);
    expect(e?.code).toBe('REDUCER_REJECTED');
    expect(e?.message).toBe('the reducer refused event 2 of 2 (Withdrawn): no; nothing was stored');
    expect(e?.details).toEqual({
      exceptionType: 'X.Y',
      reducerError: 'APPLY_FAILED: no',
      eventIndex: 1,
      eventType: 'Withdrawn',
      eventId: 'e-2',
      version: 7,
    });
  });

  it('refuses a state over the cap with STATE_TOO_LARGE and the limit', () => {
    const big = { code: 'STATE_TOO_LARGE' as const, message: 'too big', limit: 10 };
    const e = refusalOf({ state: '{}', failedVersion: 6, error: 'STATE_TOO_LARGE: too big', failure: big }, events, 5);
    expect(e?.code).toBe('STATE_TOO_LARGE');
    expect(e?.details).toMatchObject({ limit: 10, eventIndex: 0, eventType: 'Deposited', version: 6 });
  });

  it('lets through what is not the event’s doing: no failure, no host account (a deadline, a crash), other host codes', () => {
    expect(refusalOf({ state: '{}' }, events, 0)).toBeUndefined();
    expect(refusalOf({ state: '{}', failedVersion: 1, error: 'TIMEOUT: the reducer exceeded its deadline' }, events, 0)).toBeUndefined();
    const unreadable = { code: 'STATE_DESERIALIZATION_FAILED' as const, message: 'bad' };
    expect(refusalOf({ state: '{}', failedVersion: 1, error: 'x', failure: unreadable }, events, 0)).toBeUndefined();
    // A failure before the append's events (the stored history's): not this append's fault.
    expect(refusalOf({ state: '{}', failedVersion: 3, error: 'x', failure }, events, 5)).toBeUndefined();
  });
});

describe('AggregateStateKeeper: an append its reducer refuses', () => {
  it('is refused with REDUCER_REJECTED; nothing stored, the state unchanged, and a deposit after it goes on from that state', async () => {
    const w = new World();
    w.bind('account');
    const keeper = w.keeper();
    await keeper.append(append('account-1', ['Opened']));
    const refused = keeper.append(append('account-1', ['Withdrawn']));
    await expect(refused).rejects.toMatchObject({
      code: 'REDUCER_REJECTED',
      details: { exceptionType: 'System.InvalidOperationException', eventType: 'Withdrawn', eventIndex: 0, version: 2 },
    });
    expect(w.streams.get('account-1')?.events).toHaveLength(1);
    expect(w.snapshots.get('account-1')).toMatchObject({ version: 1, state: '{"n":1}', failedVersion: null });
    const next = await keeper.append(append('account-1', ['Deposited']));
    expect(next?.result.events[0].version).toBe(2);
    expect(stateOf(next)).toEqual({ n: 2 });
    // Now it holds: the same withdrawal is accepted.
    expect(stateOf(await keeper.append(append('account-1', ['Withdrawn'])))).toEqual({ n: 3 });
  });

  it('refuses a batch with one refused event whole: none of it stored, the refusal names the event', async () => {
    const w = new World();
    w.bind('account');
    const keeper = w.keeper();
    await expect(keeper.append(append('account-1', ['Opened', 'Withdrawn', 'Deposited']))).rejects.toMatchObject({
      code: 'REDUCER_REJECTED',
      message: 'the reducer refused event 2 of 3 (Withdrawn): insufficient funds; nothing was stored',
      details: { eventIndex: 1, version: 2 },
    });
    expect(w.streams.has('account-1')).toBe(false);
    expect(w.snapshots.has('account-1')).toBe(false);
  });

  it('hands the refusal to the commit with the base it was computed on and the request’s key, so the commit’s checks come first', async () => {
    const w = new World();
    w.bind('account');
    const keeper = w.keeper();
    await keeper.append(append('account-1', ['Opened']));
    const idempotency = { key: 'k', requestHash: 'h', notBefore: 0 };
    await expect(keeper.append(append('account-1', ['Withdrawn'], { idempotency }))).rejects.toMatchObject({ code: 'REDUCER_REJECTED' });
    const asked = w.requests[w.requests.length - 1];
    expect(asked.refusal?.code).toBe('REDUCER_REJECTED');
    expect(asked.snapshot?.baseVersion).toBe(1);
    expect(asked.idempotency).toMatchObject(idempotency);
  });

  it('does not answer a refusal computed on a stale state: another instance’s deposit makes the withdrawal good', async () => {
    const w = new World();
    w.bind('account');
    const keeper = w.keeper();
    await keeper.append(append('account-1', ['Opened'])); // cached: n = 1
    w.appendElsewhere('account-1', 'account', 'Deposited'); // n = 2 in the store
    const outcome = await keeper.append(append('account-1', ['Withdrawn']));
    expect(outcome?.result.events[0].version).toBe(3);
    expect(stateOf(outcome)).toEqual({ n: 3 });
  });

  it('refuses an event that would make the state too large with STATE_TOO_LARGE, nothing stored', async () => {
    const w = new World();
    w.bind('account');
    const keeper = w.keeper();
    await keeper.append(append('account-1', ['Opened']));
    await expect(keeper.append(append('account-1', ['Huge']))).rejects.toMatchObject({
      code: 'STATE_TOO_LARGE',
      details: { limit: 1_048_576, eventType: 'Huge', version: 2 },
    });
    expect(w.streams.get('account-1')?.events).toHaveLength(1);
  });

  it('accepts an append to an aggregate whose stored history the reducer cannot fold, with the stateError of the history', async () => {
    const w = new World();
    // Written before the reducer was bound: an overdraft the new reducer refuses.
    w.appendElsewhere('account-1', 'account', 'Withdrawn');
    w.bind('account');
    const keeper = w.keeper();
    const outcome = await keeper.append(append('account-1', ['Deposited']));
    expect(outcome?.result.events[0].version).toBe(2);
    // The history's failure, with the details this instance remembers of it (exception type, position).
    expect(outcome?.stateError).toEqual({
      code: 'REDUCER_FAILED',
      message: 'APPLY_FAILED: insufficient funds',
      failedVersion: 1,
      exceptionType: 'System.InvalidOperationException',
      position: 1,
    });
    // Held at the failed event: a later event the reducer would refuse is stored too (it is not folded).
    const later = await keeper.append(append('account-1', ['Withdrawn']));
    expect(later?.result.events[0].version).toBe(3);
    expect(later?.stateError).toMatchObject({ failedVersion: 1 });
    await expect(keeper.read('t', 'account', 'account-1')).rejects.toMatchObject({ code: 'REDUCER_FAILED' });
  });
});
