import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, clientFor, newTenant, ServiceProcess } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { elapse } from '../support/wait';

afterAll(() => stopBackends(), 60_000);

interface Ack {
  aggregateId: string;
  version: number;
  eventId: string;
  position: number;
}

/** Writers that append until told to stop or until the service goes away; they record what was acknowledged. */
/** `acks` fills as appends are acknowledged; `done` resolves to it once every writer has stopped. */
function loadUntil(client: Client, writers: number, stop: () => boolean): { acks: Ack[]; done: Promise<Ack[]> } {
  const acks: Ack[] = [];
  const worker = async (w: number) => {
    for (let i = 0; !stop(); i++) {
      try {
        const res = await client.post('/events', { aggregateId: `w${w}-1`, eventType: 'Tick', data: { i } });
        if (res.status === 201) acks.push({ aggregateId: `w${w}-1`, ...res.body });
        else if (res.status !== 503) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
      } catch (e) {
        if (e instanceof Error && e.message.startsWith('unexpected')) throw e;
        return; // connection refused or reset: the service is gone
      }
    }
  };
  return { acks, done: Promise.all(Array.from({ length: writers }, (_, w) => worker(w))).then(() => acks) };
}

async function expectAllAcknowledgedStored(client: Client, acks: Ack[], writers: number): Promise<void> {
  const all: { aggregateId: string; version: number; eventId: string; position: number }[] = [];
  for (let w = 0; w < writers; w++) {
    const res = await client.get(`/events/w${w}-1?limit=10000`);
    expect(res.status).toBe(200);
    all.push(...res.body.events);
    // Versions 1..N, no gap, no duplicate.
    expect(res.body.events.map((e: any) => e.version)).toEqual(res.body.events.map((_: unknown, i: number) => i + 1));
  }
  const byId = new Map(all.map((e) => [e.eventId, e]));
  for (const ack of acks)
    expect(byId.get(ack.eventId)).toMatchObject({ aggregateId: ack.aggregateId, version: ack.version, position: ack.position });
  // Positions of the tenant: gap-free from 1.
  const positions = all.map((e) => e.position).sort((x, y) => x - y);
  expect(positions).toEqual(positions.map((_, i) => i + 1));
}

describe.each(STORE_BACKENDS)('durability on %s', (backend) => {
  let env: Record<string, string>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-dur-'));
    env = { DATA_DIR: dataDir, ...(await envFor(backend)) };
  }, 120_000);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** Appends from 16 writers, stops the service with `signal` mid-load, restarts it and checks every acknowledged event. */
  /** Stops the service mid-load: after `afterMs` and once more than `minAcks` appends were acknowledged (a loaded machine is slower). */
  async function stopMidLoad(
    signal: NodeJS.Signals,
    afterMs: number,
    minAcks: number,
  ): Promise<{ acks: Ack[]; code: number | null; output: string }> {
    const svc = new ServiceProcess(env);
    await svc.start();
    const client = await newTenant(svc.url, signal);
    let stopped = false;
    const load = loadUntil(client, 16, () => stopped);
    await elapse(afterMs, 'the load runs this long before the kill');
    for (const end = Date.now() + 30_000; load.acks.length <= minAcks && Date.now() < end;)
      await elapse(20, 'poll interval: until enough appends are acknowledged');
    const code = await svc.kill(signal);
    stopped = true;
    const acks = await load.done;
    const again = new ServiceProcess(env);
    await again.start();
    try {
      await expectAllAcknowledgedStored(clientFor(again.url, client.key), acks, 16);
    } finally {
      await again.kill('SIGTERM');
    }
    return { acks, code, output: svc.output };
  }

  it('loses no acknowledged append when the process is killed mid-load (SIGKILL)', async () => {
    const { acks } = await stopMidLoad('SIGKILL', 1500, 50);
    expect(acks.length).toBeGreaterThan(50);
  }, 90_000);

  it('finishes in-flight appends on SIGTERM and exits cleanly', async () => {
    const { acks, code, output } = await stopMidLoad('SIGTERM', 800, 20);
    expect(acks.length).toBeGreaterThan(20);
    if (code !== 0) throw new Error(`exit ${code}:\n${output}`);
  }, 90_000);
});
