import { Executor } from './executor';
import { ExecutorFactory, ExecutorRoster } from './executor-roster';

/** Stand-ins for executors: the roster reads only their label, idleness and last use, and closes them. */
function roster(isolation: 'shared' | 'tenant', execHosts = 2) {
  const made: { label: string; idle: boolean; lastUsed: number; closed: boolean; close(): Promise<void> }[] = [];
  const create: ExecutorFactory = (label) => {
    const ex = { label, idle: true, lastUsed: made.length, closed: false, close: async () => void (ex.closed = true) };
    made.push(ex);
    return ex as unknown as Executor;
  };
  const r = new ExecutorRoster({ isolation, execHosts, stallMs: 0, quarantine: { baseMs: 60_000, maxMs: 3_600_000 } }, create);
  return { r, made, label: (ex: Executor | undefined) => ex?.label };
}

describe('ExecutorRoster', () => {
  afterEach(() => jest.useRealTimers());

  it('shared: a tenant always goes to the same shared executor', () => {
    const { r, label } = roster('shared', 4);
    expect(r.shared.map((ex) => ex.label)).toEqual([
      'executor[shared-0]',
      'executor[shared-1]',
      'executor[shared-2]',
      'executor[shared-3]',
    ]);
    expect(label(r.enter('t1'))).toBe(label(r.enter('t1')));
    expect(r.placement('t1')).toEqual({ kind: 'shared', slot: r.shared.indexOf(r.route('t1')) });
  });

  it('an offender goes to a quarantine executor at once, and back only once its calls there are answered', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { r, label } = roster('shared');
    const shared = r.route('t1');
    r.quarantine.offend('t1');
    const apart = r.enter('t1');
    expect(label(apart)).toBe('executor[quarantine:t1]');
    expect(r.placement('t1')).toMatchObject({ kind: 'quarantine' });
    jest.setSystemTime(1_000_000 + 61_000);
    // The quarantine is over, but a call of the tenant is still pending there: its calls keep their order.
    expect(r.route('t1')).toBe(apart);
    r.settled('t1');
    expect(r.route('t1')).toBe(shared);
  });

  it('releases a quarantine executor once the quarantine is over and it is idle', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { r } = roster('shared');
    r.quarantine.offend('t1');
    const apart = r.route('t1');
    expect(r.sweep(Date.now())).toEqual([]);
    jest.setSystemTime(1_000_000 + 61_000);
    expect(r.sweep(Date.now())).toEqual([apart]);
    expect(r.all()).toEqual(r.shared);
  });

  it('tenant isolation: past execHosts, the least recently used idle executor is closed to make room', () => {
    const { r, made } = roster('tenant', 2);
    r.route('t1');
    r.route('t2');
    r.route('t3');
    expect(made.map((m) => [m.label, m.closed])).toEqual([
      ['executor[tenant:t1]', true],
      ['executor[tenant:t2]', false],
      ['executor[tenant:t3]', false],
    ]);
    expect(r.placement('t3')).toEqual({ kind: 'tenant' });
  });
});
