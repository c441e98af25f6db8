import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, clientFor, newTenant, ServiceProcess } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { elapse } from '../support/wait';

/**
 * Issue 28: a transaction over three aggregates (POST /events/transaction) is stored all or none,
 * kill -9 in the middle included. Writers send a stream of transactions (aggregate a: two events,
 * b and c: one each; every event tagged `txn:<writer>-<n>`); the service process is killed with
 * SIGKILL mid-stream and started again. Then: every transaction's events are all there (4,
 * contiguous positions, its aggregates' versions in order) or none is; every acknowledged one is
 * there exactly as acknowledged; positions and versions are gap-free.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const WRITERS = 8;
const PER_TXN = 4;

interface TxnAck {
  txn: string;
  startPosition: number;
  endPosition: number;
  aggregates: { aggregateId: string; startVersion: number; endVersion: number; eventIds: string[] }[];
}

const transaction = (w: number, n: number) => ({
  events: [
    { aggregateId: `w${w}-a`, eventType: 'Debited', data: { n, amount: 10 }, tags: [`txn:${w}-${n}`] },
    { aggregateId: `w${w}-b`, eventType: 'Credited', data: { n, amount: 7 }, tags: [`txn:${w}-${n}`] },
    { aggregateId: `w${w}-c`, eventType: 'Credited', data: { n, amount: 3 }, tags: [`txn:${w}-${n}`] },
    { aggregateId: `w${w}-a`, eventType: 'Settled', data: { n }, tags: [`txn:${w}-${n}`] },
  ],
  correlationId: `txn-${w}-${n}`,
});

function loadUntil(client: Client, stop: () => boolean): { acks: TxnAck[]; done: Promise<TxnAck[]> } {
  const acks: TxnAck[] = [];
  const worker = async (w: number) => {
    for (let n = 0; !stop(); n++) {
      let res;
      try {
        res = await client.post('/events/transaction', transaction(w, n));
      } catch {
        return; // connection refused or reset: the service is gone
      }
      if (res.status === 201) acks.push({ txn: `${w}-${n}`, ...res.body });
      else if (res.status !== 503) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
    }
  };
  return { acks, done: Promise.all(Array.from({ length: WRITERS }, (_, w) => worker(w))).then(() => acks) };
}

async function wholeLog(client: Client): Promise<any[]> {
  const all: any[] = [];
  for (let after = 0; ;) {
    const res = await client.get(`/events?afterPosition=${after}&limit=10000`);
    expect(res.status).toBe(200);
    all.push(...res.body.events);
    if (res.body.events.length < 10000) return all;
    after = res.body.nextAfterPosition;
  }
}

function expectAllOrNone(log: any[], acks: TxnAck[]): number {
  // Positions of the tenant: gap-free from 1 (nothing half-written left a hole).
  expect(log.map((e) => e.position)).toEqual(log.map((_, i) => i + 1));
  const byTxn = new Map<string, any[]>();
  for (const e of log) {
    expect(e.tags).toHaveLength(1);
    const t = e.tags[0].slice('txn:'.length);
    byTxn.set(t, [...(byTxn.get(t) ?? []), e]);
  }
  for (const [txn, events] of byTxn) {
    const [w, n] = txn.split('-');
    // All four, contiguous, in the order of transaction(): a's two events, then b, then c.
    expect({ txn, got: events.map((e) => [e.aggregateId, e.eventType]) }).toEqual({
      txn,
      got: [
        [`w${w}-a`, 'Debited'],
        [`w${w}-a`, 'Settled'],
        [`w${w}-b`, 'Credited'],
        [`w${w}-c`, 'Credited'],
      ],
    });
    expect(events[PER_TXN - 1].position - events[0].position).toBe(PER_TXN - 1);
    for (const e of events) expect(e.data.n).toBe(Number(n));
  }
  // Each aggregate's versions 1..N, no gap, no duplicate.
  const byAggregate = new Map<string, number[]>();
  for (const e of log) byAggregate.set(e.aggregateId, [...(byAggregate.get(e.aggregateId) ?? []), e.version]);
  for (const versions of byAggregate.values()) expect(versions).toEqual(versions.map((_, i) => i + 1));
  // Every acknowledged transaction is there, exactly as its answer said.
  const byId = new Map(log.map((e) => [e.eventId, e]));
  for (const ack of acks) {
    const events = byTxn.get(ack.txn);
    expect({ txn: ack.txn, stored: events?.length ?? 0 }).toEqual({ txn: ack.txn, stored: PER_TXN });
    expect([events![0].position, events![PER_TXN - 1].position]).toEqual([ack.startPosition, ack.endPosition]);
    for (const a of ack.aggregates)
      a.eventIds.forEach((id, i) => expect(byId.get(id)).toMatchObject({ aggregateId: a.aggregateId, version: a.startVersion + i }));
  }
  return byTxn.size;
}

describe.each(STORE_BACKENDS)('transactions under kill -9 on %s', (backend) => {
  let env: Record<string, string>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-txn-crash-'));
    env = { DATA_DIR: dataDir, QUOTA_APPEND_REQUESTS: '0', QUOTA_APPEND_EVENTS: '0', ...(await envFor(backend)) };
  }, 120_000);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('stores every transaction all or none, every acknowledged one, when the process is killed mid-stream', async () => {
    const svc = new ServiceProcess(env);
    await svc.start();
    const client = await newTenant(svc.url, `txn-crash-${backend}`);
    let stopped = false;
    const load = loadUntil(client, () => stopped);
    await elapse(1000, 'the load runs this long before the kill');
    for (const end = Date.now() + 30_000; load.acks.length <= 40 && Date.now() < end;)
      await elapse(20, 'poll interval: until enough transactions are acknowledged');
    await svc.kill('SIGKILL');
    stopped = true;
    const acks = await load.done;
    expect(acks.length).toBeGreaterThan(40);

    const again = new ServiceProcess(env);
    await again.start();
    try {
      const reader = clientFor(again.url, client.key);
      const stored = expectAllOrNone(await wholeLog(reader), acks);
      expect(stored).toBeGreaterThanOrEqual(acks.length);
      // The store takes transactions again after the restart, and the new one lands whole after the old ones.
      const next = await reader.post('/events/transaction', transaction(99, 0));
      expect(next.status).toBe(201);
      expect(next.body.endPosition - next.body.startPosition).toBe(PER_TXN - 1);
      expectAllOrNone(await wholeLog(reader), [...acks, { txn: '99-0', ...next.body }]);
    } finally {
      await again.kill('SIGTERM');
    }
  }, 150_000);
});
