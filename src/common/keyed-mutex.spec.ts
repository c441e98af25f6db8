import { KeyedMutex } from './keyed-mutex';
import { elapse } from '../../test/support/wait';

describe('KeyedMutex', () => {
  it('serialises one key in arrival order and lets other keys through', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const step = (k: string, ms: number) =>
      m.run(k, async () => {
        log.push(`start ${k}${ms}`);
        await elapse(ms, 'the step holds its key this long');
        log.push(`end ${k}${ms}`);
      });
    await Promise.all([step('a', 30), step('a', 1), step('b', 5)]);
    expect(log.indexOf('end a30')).toBeLessThan(log.indexOf('start a1'));
    expect(log.indexOf('end b5')).toBeLessThan(log.indexOf('end a30'));
  });

  it('goes on after a failure', async () => {
    const m = new KeyedMutex();
    await expect(
      m.run('a', async () => {
        throw new Error('x');
      }),
    ).rejects.toThrow('x');
    await expect(m.run('a', async () => 7)).resolves.toBe(7);
  });
});
