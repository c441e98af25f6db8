import { HostFailure } from '../host/host-process';
import { DeathReports } from './death-report';
import { ExecutorCall, ExecutorListener } from './executor-call';

const call = (tenantId: string): ExecutorCall =>
  ({ tenantId, assemblyId: 'a', item: {}, deadlineMs: 1000, resolve: () => undefined, reject: () => undefined, reruns: 0 }) as any;

function listener() {
  const told: string[] = [];
  const l: ExecutorListener<string> = {
    offended: (ex: string, tenantId: string, failure: HostFailure) => void told.push(`offended ${ex} ${tenantId} ${failure}`),
    interrupted: (ex: string, calls: ExecutorCall[], offenders: string[]) =>
      void told.push(`interrupted ${ex} [${calls.map((c) => c.tenantId)}] [${offenders}]`),
    stalled: () => undefined,
    settled: () => undefined,
    refused: () => undefined,
  };
  return { l, told };
}

describe('DeathReports', () => {
  it('reports each blamed tenant at once and hands the interrupted calls back once, after the tick, in order', async () => {
    const { l, told } = listener();
    const deaths = new DeathReports('ex-1', l);
    deaths.blame('bad', 'CRASHED');
    deaths.rerun(call('a'));
    deaths.rerun(call('b'));
    deaths.moveApart('slow');
    expect(told).toEqual(['offended ex-1 bad CRASHED']);
    await Promise.resolve();
    expect(told).toEqual(['offended ex-1 bad CRASHED', 'interrupted ex-1 [a,b] [bad,slow]']);
  });

  it('tells the pool of a death with nothing interrupted, once', async () => {
    const { l, told } = listener();
    const deaths = new DeathReports('ex-1', l);
    deaths.open();
    deaths.open();
    await Promise.resolve();
    expect(told).toEqual(['interrupted ex-1 [] []']);
  });
});
