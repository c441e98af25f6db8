import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppendBatcher } from '../src/events/append-batcher';
import { PostgresStore } from '../src/store/postgres/postgres-store';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { Store } from '../src/store/store.port';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { closedLoop, CONNECTIONS, DURATION_S, fmt, median, pct } from './bench-util';

/**
 * Erasure (README "Erasure"), at the store, on both adapters:
 *  1. how long one erasure takes by the aggregate's number of events (its one transaction);
 *  2. what erasures cost the tenant's other appends: append throughput of other aggregates alone,
 *     then while erasures of 1,000-event aggregates run back to back (each holds the tenant's
 *     append lock for its length), with the append p99.
 * BENCH_ERASE_EVENTS (default 100,10000) sets the sizes; BENCH_SECONDS the phases' length;
 * BENCH_ERASURES (default 200) how many 1,000-event aggregates are filled beforehand for phase 2.
 */
const SIZES = (process.env.BENCH_ERASE_EVENTS ?? '100,10000').split(',').map(Number);
const ERASURES = Number(process.env.BENCH_ERASURES ?? 200);
const TENANT = 't';

async function fill(store: Store, aggregateId: string, events: number): Promise<void> {
  for (let done = 0; done < events; done += 1000) {
    const n = Math.min(1000, events - done);
    const [o] = await store.events.appendMany([
      {
        tenantId: TENANT,
        aggregateId,
        inferredType: 'person',
        metadata: '{"ip":"10.0.0.1"}',
        events: Array.from({ length: n }, (_, i) => ({ eventType: 'Noted', data: JSON.stringify({ note: `personal ${done + i}` }) })),
      },
    ]);
    if (!o.ok) throw new Error(`fill ${aggregateId}: ${o.error.code}`);
  }
}

async function figures(kind: string, store: Store): Promise<string[]> {
  await store.tenants.createTenant({ tenantId: TENANT, name: 'bench', createdAt: Date.now() });
  const lines: string[] = [];
  for (const size of SIZES) {
    const times: number[] = [];
    for (let r = 0; r < 3; r++) {
      const id = `person-${size}-${r}`;
      await fill(store, id, size);
      const t0 = process.hrtime.bigint();
      await store.erasure.erase(TENANT, id);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    lines.push(`| ${kind} | erase one aggregate of ${fmt(size)} events | ${fmt(median(times), 1)} ms (median of 3) |`);
  }

  const batcher = new AppendBatcher(store.events, { maxConcurrentCommits: store.kind === 'postgres' ? 2 : 1 });
  const seconds = Math.max(2, Math.round(DURATION_S / 2));
  const appendLoop = async () => {
    const latencies: number[] = [];
    const rate = await closedLoop(CONNECTIONS, seconds, async (w, i) => {
      const t0 = process.hrtime.bigint();
      await batcher.append({
        tenantId: TENANT,
        aggregateId: `acct-${w}-${i % 50}`,
        inferredType: 'acct',
        events: [{ eventType: 'Tick', data: '{}' }],
      });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    });
    return { rate, p99: pct(latencies, 99) };
  };
  // The aggregates to erase are filled first, so both phases run on the same store.
  for (let r = 0; r < ERASURES + 3; r++) await fill(store, `busy-${r}`, 1000);
  // Three of them erased with nothing else running: an erasure of rows written a while ago.
  const cold: number[] = [];
  for (let r = ERASURES; r < ERASURES + 3; r++) {
    const t0 = process.hrtime.bigint();
    await store.erasure.erase(TENANT, `busy-${r}`);
    cold.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  lines.push(`| ${kind} | erase one aggregate of 1,000 events written earlier, nothing else running | ${fmt(median(cold), 1)} ms |`);
  const alone = await appendLoop();
  // Erasures of those 1,000-event aggregates, one after another, while the same append load runs.
  let stop = false;
  let erased = 0;
  const erasing = Date.now();
  let erasingMs = 0;
  const busy: number[] = [];
  const eraser = (async () => {
    for (let r = 0; !stop && r < ERASURES; r++) {
      const t0 = process.hrtime.bigint();
      await store.erasure.erase(TENANT, `busy-${r}`);
      busy.push(Number(process.hrtime.bigint() - t0) / 1e6);
      erased++;
    }
    erasingMs = Date.now() - erasing;
    if (!stop) process.stderr.write(`${store.kind}: all ${ERASURES} prepared erasures done before the phase ended; raise BENCH_ERASURES\n`);
  })();
  const during = await appendLoop();
  stop = true;
  await eraser;
  lines.push(`| ${kind} | appends of other aggregates, alone | ${fmt(alone.rate)}/s, p99 ${fmt(alone.p99, 1)} ms |`);
  lines.push(
    `| ${kind} | the same, with erasures of 1,000-event aggregates back to back (${fmt(erased / (erasingMs / 1000), 1)} erasures/s, each ${fmt(median(busy), 1)} ms median) | ${fmt(during.rate)}/s, p99 ${fmt(during.p99, 1)} ms |`,
  );
  return lines;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-erasure-bench-'));
  const lines = ['| store | measure | figure |', '|---|---|---|'];
  const sqlite = SqliteStore.inDataDir(dir);
  await sqlite.migrate();
  try {
    lines.push(...(await figures('sqlite', sqlite)));
  } finally {
    await sqlite.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const pg = await ThrowawayPostgres.start();
  try {
    const store = new PostgresStore({ connectionString: await pg.createDatabase('bench_erasure') });
    await store.migrate();
    try {
      lines.push(...(await figures('postgres', store)));
    } finally {
      await store.close();
    }
  } finally {
    await pg.stop();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
  process.exit(1);
});
