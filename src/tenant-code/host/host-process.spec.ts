import { HostCallError, HostItem, HostProcess } from './host-process';

/**
 * A host stand-in (a real Node process): answers requests one at a time, in order, as the .NET
 * host does. `sleep` waits payload.ms; `batch` says it started, then runs its items in order,
 * each waiting `ms` (or exiting the process on `exit`) and answering with its own item line, then
 * the result line (or exits before starting, with `dieBeforeStart`).
 */
const FAKE_HOST = `
const lines = []; let busy = false; let buf = '';
const write = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
async function serve() {
  if (busy) return; busy = true;
  while (lines.length) {
    const req = JSON.parse(lines.shift());
    if (req.type === 'batch') {
      if (req.payload.dieBeforeStart) process.exit(3);
      write({ id: req.id, type: 'started' });
      for (const [index, item] of req.payload.items.entries()) {
        if (item.exit) process.exit(3);
        await wait(item.ms);
        write({ id: req.id, type: 'item', payload: { index, result: { slept: item.ms } } });
      }
      write({ id: req.id, type: 'result', payload: { items: req.payload.items.length } });
    } else {
      await wait(req.payload.ms);
      write({ id: req.id, type: 'result', payload: { slept: req.payload.ms } });
    }
  }
  busy = false;
}
process.stdin.on('data', (d) => { buf += d; let nl; while ((nl = buf.indexOf('\\n')) >= 0) { lines.push(buf.slice(0, nl)); buf = buf.slice(nl + 1); } serve(); });
write({ id: 0, type: 'ready', payload: { pid: process.pid, mode: 'exec', protocolVersion: 2, seccomp: false } });
`;

const start = () =>
  HostProcess.start({
    mode: 'exec',
    label: 'fake',
    launch: { command: process.execPath, args: ['-e', FAKE_HOST], env: {} },
    readyTimeoutMs: 10_000,
    maxLineBytes: 1 << 20,
  });

// The fake host's requests are not the protocol's types: typed loosely here.
const sleep = (h: HostProcess, ms: number, deadlineMs: number) =>
  (h as any).call('sleep', { ms }, deadlineMs) as Promise<{ slept: number }>;
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: HostCallError) => e,
  );

describe('HostProcess deadlines and blame', () => {
  let host: HostProcess;
  afterEach(() => host?.kill());

  it('starts a call’s clock when the host reaches it, not while it waits behind another', async () => {
    host = await start();
    // Each takes 300 ms of a 600 ms deadline; the third has waited 600 ms before its turn.
    const calls = [sleep(host, 300, 600), sleep(host, 300, 600), sleep(host, 300, 600)];
    await expect(Promise.all(calls)).resolves.toEqual([{ slept: 300 }, { slept: 300 }, { slept: 300 }]);
  });

  it('fails the call past its deadline as the one running, and the calls behind it as not running', async () => {
    host = await start();
    const [slow, behind] = [failure(sleep(host, 5_000, 300)), failure(sleep(host, 10, 300))];
    expect(await slow).toMatchObject({ failure: 'TIMEOUT', position: { running: true } });
    expect(await behind).toMatchObject({ failure: 'CRASHED', position: { running: false } });
    expect(host.alive).toBe(false);
  });

  it('answers a batch item by item, gives each item its own deadline, and names the item that hung', async () => {
    host = await start();
    const seen: HostItem<any>[] = [];
    const batch = failure(
      host.callItems('batch', { items: [{ ms: 200 }, { ms: 200 }, { ms: 5_000 }] } as any, [300, 300, 300], (i) => seen.push(i)),
    );
    expect(await batch).toMatchObject({ failure: 'TIMEOUT', position: { running: true, itemIndex: 2 } });
    expect(seen).toEqual([
      { index: 0, result: { slept: 200 } },
      { index: 1, result: { slept: 200 } },
    ]);
  });

  it('blames no one when the host died before it began the oldest batch', async () => {
    host = await start();
    const batch = failure(host.callItems('batch', { items: [{ ms: 10 }], dieBeforeStart: true } as any, [1_000], () => undefined));
    expect(await batch).toMatchObject({ failure: 'CRASHED', position: { running: false } });
  });

  it('names the call and item a host was running when it died', async () => {
    host = await start();
    const seen: number[] = [];
    const batch = failure(
      host.callItems('batch', { items: [{ ms: 10 }, { exit: true }, { ms: 10 }] } as any, [1_000, 1_000, 1_000], (i) => seen.push(i.index)),
    );
    const after = failure(sleep(host, 10, 1_000));
    expect(await batch).toMatchObject({ failure: 'CRASHED', position: { running: true, itemIndex: 1 } });
    expect(await after).toMatchObject({ failure: 'CRASHED', position: { running: false } });
    expect(seen).toEqual([0]);
  });
});
