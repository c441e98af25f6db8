import { HostProcess } from '../host/host-process';
import { ExecutorCall } from './executor-call';
import { StallWatch } from './stall-watch';

const host = (alive = true) => ({ alive }) as unknown as HostProcess;
const call = (tenantId: string, settled = false) => ({ tenantId, settled }) as unknown as ExecutorCall;

describe('StallWatch', () => {
  it('acts on a stall only once another tenant waits, and marks the call replaced, not failed', () => {
    const watch = new StallWatch();
    const h = host();
    const slow = call('slow');
    expect(watch.report(h, h, slow, 600)).toBe(true);
    expect(watch.due(h, () => false)).toBeUndefined();
    expect(watch.pending).toBe(true);
    expect(watch.due(h, (t) => t === 'slow')).toEqual({ host: h, call: slow, ms: 600 });
    expect(slow.stalled).toBe(true);
    expect(watch.replacing).toBe(slow);
    expect(watch.pending).toBe(false);
  });

  it('forgets a stall whose call was answered or whose process is no longer the running one', () => {
    const watch = new StallWatch();
    const [old, fresh] = [host(), host()];
    expect(watch.report(old, fresh, call('t'), 600)).toBe(false);
    expect(watch.report(old, old, call('t', true), 600)).toBe(false);
    expect(watch.report(old, old, call('t'), 600)).toBe(true);
    expect(watch.due(fresh, () => true)).toBeUndefined();
    expect(watch.pending).toBe(false);
  });
});
