import { Readiness } from './readiness';

describe('Readiness', () => {
  it('is ready with no failing list when every check passes', async () => {
    const r = new Readiness([{ name: 'a', check: () => ({ ready: true, detail: { x: 1 } }) }]);
    expect(await r.report()).toEqual({ status: 'ready', a: { x: 1 } });
  });

  it('names every failing check, a thrown error and a check past its deadline included', async () => {
    const r = new Readiness(
      [
        { name: 'ok', check: () => ({ ready: true, detail: {} }) },
        { name: 'down', check: () => ({ ready: false, detail: { why: 'no' } }) },
        { name: 'throws', check: async () => Promise.reject(new Error('boom')) },
        { name: 'hangs', check: () => new Promise(() => undefined) },
      ],
      50,
    );
    expect(await r.report()).toEqual({
      status: 'not-ready',
      failing: ['down', 'throws', 'hangs'],
      ok: {},
      down: { why: 'no' },
      throws: { error: 'boom' },
      hangs: { error: 'no answer within 50 ms' },
    });
  });

  it('stays ready with a degraded check, naming it under degraded; a failing one still makes it not ready', async () => {
    const degraded = { name: 'redis', check: () => ({ ready: true, degraded: true, detail: { reachable: false } }) };
    const ok = { name: 'store', check: () => ({ ready: true, detail: {} }) };
    expect(await new Readiness([ok, degraded]).report()).toEqual({
      status: 'ready',
      degraded: ['redis'],
      store: {},
      redis: { reachable: false },
    });
    const down = { name: 'store', check: () => ({ ready: false, detail: {} }) };
    expect(await new Readiness([down, degraded]).report()).toMatchObject({ status: 'not-ready', failing: ['store'], degraded: ['redis'] });
  });
});
