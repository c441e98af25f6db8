import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, clientFor, newTenant, ServiceProcess } from '../support/service-harness';
import { envFor, postgresServer, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { projectionActive, until, uploadProjection } from '../support/tenant-code';

/**
 * Issue 25, item 2: lane runs and routing commit in a durability class of their own (SQLite
 * synchronous=NORMAL, PostgreSQL synchronous_commit=off: no fsync or WAL flush of their own). What
 * a crash may cost is the last lane commits — each with its checkpoint — never an acknowledged
 * append; the lanes then apply those events again. Proven here while the lanes are saturated:
 * after a kill -9 of the service, after a power loss (SQLite: the data file as it was at an earlier
 * moment, taken with VACUUM INTO while the lanes ran: every append in it, lane commits after it
 * lost), and after a crash of the PostgreSQL server, every projection's every state equals the one
 * computed from the whole log, and each event made exactly one notification per projection.
 */
jest.setTimeout(600_000);
afterAll(() => stopBackends(), 60_000);

const PROJECTIONS = 6;
const KEYS = 12;
const EVENTS = 480;

const tally = (n: number) => `
using EventSourcing;
namespace Crash${n}
{
    public sealed class Tally { public long Count { get; set; } public long Sum { get; set; } }
    public sealed record Tick(long N);
    [ProjectionName("crash-${n}")]
    public sealed class Crash${n}Projection : IProjection<Tally>
    {
        public string? ResolveKey(Event e) => e.AggregateId;
        public Tally Apply(Tally s, Event e) { s.Count++; s.Sum += e.DataAs<Tick>().N; return s; }
    }
}`;

/** The shared `until`, with a failed call (a service restarting) counted as not yet. */
async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const v = await until(
    () => fn().catch(() => undefined),
    (x) => x !== undefined && ok(x),
    240_000,
  );
  return v as T; // `until` returns only a value `ok` accepted
}

async function deploy(url: string, c: Client, n: number): Promise<string> {
  const { uploadId } = await uploadProjection(url, c.key, [{ path: `Crash${n}.cs`, content: tally(n) }]);
  return projectionActive(url, c.key, uploadId);
}

/**
 * EVENTS events over KEYS aggregates, one batch per aggregate, all at once; every one acknowledged.
 * Batches, not one request per event: the appends must outrun the lanes, so that the lanes are far
 * behind when they end (8 writers of single events let the lanes keep up on a quiet machine, and
 * the kill then landed on idle lanes).
 */
async function appendAll(c: Client): Promise<void> {
  await Promise.all(
    Array.from({ length: KEYS }, async (_, k) => {
      const events = [];
      for (let i = k; i < EVENTS; i += KEYS) events.push({ eventType: 'Ticked', data: { n: i } });
      const r = await c.post('/events/batch', { aggregateId: `k${k}`, events });
      if (r.status !== 201) throw new Error(`batch k${k}: ${r.status} ${JSON.stringify(r.body)}`);
    }),
  );
}

/** A projection's notifications, all of them (ascending sequence). */
interface Note {
  sequence: number;
  aggregateId: string;
  version: number;
  state: { count?: number; Count?: number };
}

async function notificationsOf(c: Client, projectionId: string): Promise<Note[]> {
  const all: Note[] = [];
  for (;;) {
    const after = all.length ? all[all.length - 1].sequence : 0;
    const r = await c.get(`/projections/${projectionId}/notifications?afterSequence=${after}&limit=1000`);
    if (r.status !== 200) throw new Error(`notifications: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.notifications.length === 0) return all;
    all.push(...r.body.notifications);
  }
}

/** Every state as computed from the whole log, and one notification per event per projection. */
async function expectRecomputed(c: Client, ids: string[]): Promise<void> {
  const expected = (k: number) => {
    let count = 0;
    let sum = 0;
    for (let i = k; i < EVENTS; i += KEYS) {
      count++;
      sum += i;
    }
    return { count, sum };
  };
  // Every acknowledged append is there (the crash costs lane work only).
  const log = await c.get(`/events/k0?limit=10000`);
  expect(log.body.events?.length).toBe(EVENTS / KEYS);
  for (const id of ids) {
    for (let k = 0; k < KEYS; k++) {
      const want = expected(k);
      const r = await eventually(
        () => c.get(`/projections/${id}/state/k${k}`),
        (r) => r.status === 200 && Number(r.body.state.count ?? r.body.state.Count) >= want.count,
      );
      expect({ count: Number(r.body.state.count ?? r.body.state.Count), sum: Number(r.body.state.sum ?? r.body.state.Sum) }).toEqual(want);
    }
    const notes = await notificationsOf(c, id);
    // Sequences 1..EVENTS with no gap, and each event (aggregate and version) exactly once, with
    // the state after it (the tally of a key is its aggregate's version).
    expect(notes.map((n) => n.sequence)).toEqual(notes.map((_, i) => i + 1));
    expect(new Set(notes.map((n) => `${n.aggregateId}:${n.version}`)).size).toBe(EVENTS);
    expect(notes.length).toBe(EVENTS);
    for (const n of notes) expect(Number(n.state.count ?? n.state.Count)).toBe(n.version);
  }
}

describe.each(STORE_BACKENDS)('lanes after a crash on %s', (backend) => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-lane-crash-'));
    env = { DATA_DIR: dataDir, QUOTA_PROJECTIONS: '0', ...(await envFor(backend)) };
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** A tenant with PROJECTIONS projections, then EVENTS appends; returns while the lanes are far behind. */
  async function saturated(svc: ServiceProcess): Promise<{ c: Client; ids: string[] }> {
    const c = await newTenant(svc.url, `crash-${backend}`);
    const ids: string[] = [];
    for (let n = 0; n < PROJECTIONS; n++) ids.push(await deploy(svc.url, c, n));
    await appendAll(c);
    return { c, ids };
  }

  /** Some lane work was committed after `seen` notifications of the first projection, so that a crash now has some to lose. */
  async function lanesMoving(c: Client, id: string, seen: number): Promise<void> {
    await eventually(
      () => notificationsOf(c, id),
      (n) => n.length > seen,
    );
  }

  it('kill -9 of the service while the lanes are saturated: every state recomputed, one notification per event', async () => {
    const svc = new ServiceProcess(env);
    await svc.start();
    const { c, ids } = await saturated(svc);
    const before = (await notificationsOf(c, ids[PROJECTIONS - 1])).length;
    // The lanes are behind: the kill below lands mid-work.
    expect(before).toBeLessThan(EVENTS);
    await lanesMoving(c, ids[0], 0);
    await svc.kill('SIGKILL');
    if (backend === 'postgres') {
      // The server crashes too: lane commits not yet flushed (synchronous_commit=off) are lost.
      const pg = await postgresServer();
      pg.crash();
      pg.restart();
    }
    const again = new ServiceProcess(env);
    await again.start();
    try {
      await expectRecomputed(clientFor(again.url, c.key), ids);
    } finally {
      await again.kill('SIGTERM');
    }
  });

  if (backend === 'sqlite')
    it('a power loss (the file as of an earlier moment) loses lane commits only, and the lanes redo them', async () => {
      const svc = new ServiceProcess(env);
      await svc.start();
      const { c, ids } = await saturated(svc);
      // Some lane work committed before the image, so the image holds lanes part-way (not merely unrouted events).
      await lanesMoving(c, ids[0], 0);
      const file = path.join(dataDir, 'events.sqlite');
      const earlier = path.join(dataDir, 'earlier.sqlite');
      // A consistent image of the file at one moment while the lanes run (one read transaction):
      // what a power loss that lost every lane commit after it leaves. Every append is in it (all
      // were acknowledged before), as their fsyncs guarantee in a real power loss.
      const reader = new Database(file, { readonly: true });
      try {
        reader.exec(`VACUUM INTO '${earlier}'`);
      } finally {
        reader.close();
      }
      const image = new Database(earlier, { readonly: true });
      const notesAtImage = (image.prepare('SELECT count(*) AS n FROM notifications').get() as { n: number }).n;
      image.close();
      // The lanes were part-way at that moment: some of their work done, some left (routed or not yet).
      expect(notesAtImage).toBeGreaterThan(0);
      expect(notesAtImage).toBeLessThan(PROJECTIONS * EVENTS);
      // Lane commits made after the image: these are what the "power loss" takes away.
      await eventually(
        async () => (await Promise.all(ids.map((id) => notificationsOf(c, id)))).reduce((a, n) => a + n.length, 0),
        (n) => n > notesAtImage,
      );
      await svc.kill('SIGKILL');
      for (const f of ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm']) fs.rmSync(path.join(dataDir, f), { force: true });
      fs.renameSync(earlier, file);
      const again = new ServiceProcess(env);
      await again.start();
      try {
        await expectRecomputed(clientFor(again.url, c.key), ids);
      } finally {
        await again.kill('SIGTERM');
      }
    });
});
