/**
 * Issue 27 (the developer kit): what its new paths cost, each against a baseline in the same run.
 *
 *  compile   upload → compiled of ordinary projection archives (BENCH_COMPILES of them, each distinct), on the
 *            base checkout and this one: the analyzer and the generators now run in the compile; and on this
 *            one POST /projections/validate of the same archives (compile + every check, nothing stored).
 *  keys      catch-up over the same history (BENCH_ORDERS orders of 3 lines over BENCH_SKUS SKUs) of a one-key
 *            projection (the first line's SKU) and a three-key one (IResolveKeys, every line's SKU): events/s, key writes/s and the
 *            service's CPU per event, one after the other in one service.
 *  dry-run   POST /projections/{id}/dry-run of the one-key projection's candidate over the same history: events/s
 *            against that projection's own catch-up.
 *  reject    one request in flight: appends a reducer refuses (422 REDUCER_REJECTED) against accepted ones, p50/p99
 *            and CPU per append; on the base, the same refused deposit was stored with a `stateError` (201).
 *
 * BENCH_SERVICE_DIR: the base checkout (built); BENCH_ROUNDS (default 3) rounds of each figure; BENCH_PARTS
 * (default "compile,keys,dry-run,reject").
 *
 *   BENCH_SERVICE_DIR=/work/base BENCH_ROUNDS=3 node dist/bench/dev-kit.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { zipSources } from '../test/support/zip-writer';
import {
  adminPost,
  BENCH_ADMIN_TOKEN,
  call,
  Checkout,
  checkoutsUnderTest,
  cpuMsOf,
  fmt,
  median,
  pct,
  startChild,
  stopChild,
} from './bench-util';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const COMPILES = Number(process.env.BENCH_COMPILES ?? 5);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 3000);
const SKUS = Number(process.env.BENCH_SKUS ?? 300);
const REJECTS = Number(process.env.BENCH_REJECTS ?? 400);
const parts = new Set((process.env.BENCH_PARTS ?? 'compile,keys,dry-run,reject').split(','));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spread = (xs: number[], digits = 0) => `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

const perOrder = (tag: string) => `
using EventSourcing;
namespace PerOrder${tag}
{
    public sealed class Order { public long Lines { get; set; } public long Qty { get; set; } }
    [ProjectionName("per-order-${tag}")]
    public sealed class PerOrder : IProjection<Order>
    {
        // The first line's SKU: the same keys as the three-key projection, one key write per event.
        public string? ResolveKey(Event e) => e.EventType == "OrderPlaced" ? e.Data.GetProperty("lines")[0].GetProperty("sku").GetString() : null;
        public Order Apply(Order s, Event e)
        {
            var line = e.Data.GetProperty("lines")[0];
            s.Lines++;
            s.Qty += line.GetProperty("qty").GetInt64();
            return s;
        }
    }
}`;

const perSku = (tag: string) => `
using System.Collections.Generic;
using System.Linq;
using EventSourcing;
namespace PerSku${tag}
{
    public sealed class Stock { public long Sold { get; set; } }
    [ProjectionName("per-sku-${tag}")]
    public sealed class PerSku : IProjection<Stock>, IResolveKeys<Stock>
    {
        public string? ResolveKey(Event e) => null;
        public IReadOnlyList<string>? ResolveKeys(Event e) =>
            e.EventType == "OrderPlaced" ? e.Data.GetProperty("lines").EnumerateArray().Select(l => l.GetProperty("sku").GetString()!).ToList() : null;
        public Stock Apply(string sku, Stock s, Event e)
        {
            foreach (var line in e.Data.GetProperty("lines").EnumerateArray())
                if (line.GetProperty("sku").GetString() == sku) s.Sold += line.GetProperty("qty").GetInt64();
            return s;
        }
        public Stock Apply(Stock s, Event e) => s;
    }
}`;

async function post(
  url: string,
  key: string,
  route: string,
  zip: Buffer,
  fields: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  for (let attempt = 0; ; attempt++) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob([zip], { type: 'application/zip' }), 'upload.zip');
    const res = await fetch(`${url}${route}`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const body = (await res.json().catch(() => ({}))) as any;
    if (res.status === 429 && attempt < 200) {
      await sleep(500);
      continue;
    }
    return { status: res.status, body };
  }
}

async function deployed(url: string, key: string, kind: 'reducers' | 'projections', zip: Buffer): Promise<any> {
  const up = await post(url, key, `/${kind}/upload`, zip);
  if (up.status >= 300) throw new Error(`upload ${kind}: ${up.status} ${JSON.stringify(up.body)}`);
  const id = up.body.reducerId ?? up.body.uploadId;
  for (;;) {
    const st = await call(`${url}/${kind}/${id}/status`, 'GET', key);
    if (st.body?.status === 'failed') throw new Error(`${kind} ${id}: ${JSON.stringify(st.body)}`);
    if (
      kind === 'reducers'
        ? ['compiled', 'active'].includes(st.body?.status)
        : st.body?.projectionId && !['compiling', 'pending_compilation'].includes(st.body?.status)
    )
      return st.body;
    await sleep(20);
  }
}

async function service(c: Checkout): Promise<{ url: string; stop: () => Promise<void>; tenant: () => Promise<string>; pid: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-devkit-'));
  const { url, child } = await startChild(path.join(c.dir, 'dist', 'src', 'main.js'), {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    QUOTA_PROJECTIONS: '0',
  });
  let n = 0;
  return {
    url,
    pid: child.pid!,
    tenant: async () => (await adminPost(url, '/admin/tenants', { name: `devkit-${n++}` })).apiKey as string,
    stop: async () => {
      await stopChild(child);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function compileFigures(checkouts: Checkout[]): Promise<void> {
  console.log(`\n## compile: upload → compiled, ${COMPILES} distinct archives per round (ms)`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of round % 2 ? checkouts : [...checkouts].reverse()) {
      const s = await service(c);
      try {
        const key = await s.tenant();
        await deployed(s.url, key, 'projections', zipSources([{ path: 'Warm.cs', content: perOrder(`warm${round}`) }]));
        const compile: number[] = [];
        const validate: number[] = [];
        for (let i = 0; i < COMPILES; i++) {
          // One key per event: the base has no IResolveKeys.
          const zip = zipSources([{ path: 'P.cs', content: perOrder(`${c.label}${round}x${i}`) }]);
          let t = performance.now();
          await deployed(s.url, key, 'projections', zip);
          compile.push(performance.now() - t);
          t = performance.now();
          const v = await post(s.url, key, '/projections/validate', zip);
          if (v.status === 404) continue; // the base has no validate
          if (v.status !== 200) throw new Error(`validate: ${v.status} ${JSON.stringify(v.body)}`);
          validate.push(performance.now() - t);
        }
        console.log(
          `  round ${round} ${c.label}: upload→compiled ${spread(compile)}${validate.length ? `; validate ${spread(validate)}` : ''}`,
        );
      } finally {
        await s.stop();
      }
    }
  }
}

const order = (i: number) => ({
  aggregateId: `order-${i}`,
  aggregateType: 'order',
  eventType: 'OrderPlaced',
  data: { lines: [0, 1, 2].map((j) => ({ sku: `sku-${(i * 7 + j * 101) % SKUS}`, qty: 1 + ((i + j) % 3) })) },
});

async function appendHistory(url: string, key: string): Promise<void> {
  for (let i = 0; i < ORDERS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, ORDERS - i) }, async (_, j) => {
        const r = await call(`${url}/events`, 'POST', key, order(i + j));
        if (r.status !== 201) throw new Error(`append: ${r.status} ${JSON.stringify(r.body)}`);
      }),
    );
  }
}

async function caughtUp(url: string, key: string, projectionId: string, keys: Array<[string, (state: any) => boolean]>): Promise<void> {
  for (const [k, ok] of keys) {
    for (;;) {
      const r = await call(`${url}/projections/${projectionId}/state/${encodeURIComponent(k)}`, 'GET', key);
      if (r.status === 200 && ok(r.body.state)) break;
      await sleep(20);
    }
  }
}

async function keysFigures(c: Checkout): Promise<void> {
  console.log(`\n## keys and dry-run: ${ORDERS} orders × 3 lines over ${SKUS} SKUs (${c.label})`);
  const sold = new Map<string, number>();
  for (let i = 0; i < ORDERS; i++) for (const l of order(i).data.lines) sold.set(l.sku, (sold.get(l.sku) ?? 0) + l.qty);
  const firstLines = new Map<string, number>();
  for (let i = 0; i < ORDERS; i++) firstLines.set(order(i).data.lines[0].sku, (firstLines.get(order(i).data.lines[0].sku) ?? 0) + 1);
  for (let round = 1; round <= ROUNDS; round++) {
    const s = await service(c);
    try {
      const key = await s.tenant();
      await appendHistory(s.url, key);
      const figures: string[] = [];
      let oneRate = 0;
      let oneId = '';
      for (const [label, source, keys] of [
        [
          'one key',
          perOrder(`r${round}`),
          [...firstLines].map(([k, n]) => [k, (st: any) => Number(st.lines) === n] as [string, (s: any) => boolean]),
        ],
        [
          'three keys',
          perSku(`r${round}`),
          [...sold].map(([k, n]) => [k, (st: any) => Number(st.sold) === n] as [string, (s: any) => boolean]),
        ],
      ] as const) {
        // Timed from the compiled answer: the catch-up, not the compile (measured above).
        const st = await deployed(s.url, key, 'projections', zipSources([{ path: 'P.cs', content: source }]));
        const cpu0 = cpuMsOf(s.pid);
        const t0 = performance.now();
        await caughtUp(s.url, key, st.projectionId, [...keys]);
        const secs = (performance.now() - t0) / 1000;
        const cpuUs = ((cpuMsOf(s.pid) - cpu0) * 1000) / ORDERS;
        const writes = label === 'one key' ? ORDERS : ORDERS * 3;
        figures.push(`${label}: ${fmt(ORDERS / secs)} events/s, ${fmt(writes / secs)} key writes/s, ${fmt(cpuUs)} µs CPU/event`);
        if (label === 'one key') {
          oneRate = ORDERS / secs;
          oneId = st.projectionId;
        }
      }
      if (parts.has('dry-run')) {
        const t0 = performance.now();
        const started = await post(
          s.url,
          key,
          `/projections/${oneId}/dry-run`,
          zipSources([{ path: 'P.cs', content: perOrder(`r${round}`).replace('s.Lines++;', 's.Lines += 2;') }]),
        );
        let report = started.body;
        if (started.status === 202) {
          const id = started.body.dryRunId;
          while (report?.status !== 'completed' && report?.status !== 'failed') {
            await sleep(50);
            report = (await call(`${s.url}/projections/${oneId}/dry-runs/${id}`, 'GET', key)).body;
          }
        } else if (started.status !== 200) throw new Error(`dry-run: ${started.status} ${JSON.stringify(started.body)}`);
        const secs = (performance.now() - t0) / 1000;
        figures.push(`dry run: ${fmt(ORDERS / secs)} events/s (${fmt(ORDERS / secs / oneRate, 2)}× the one-key catch-up)`);
      }
      console.log(`  round ${round}: ${figures.join('; ')}`);
    } finally {
      await s.stop();
    }
  }
}

const OVERDRAFT = `
using EventSourcing;
namespace Bank
{
    public sealed class Account { public decimal Balance { get; set; } }
    public sealed record Amount(decimal Value);
    public sealed class AccountReducer : IReducer<Account>
    {
        public Account Apply(Account s, Event e)
        {
            var amount = e.DataAs<Amount>()!.Value;
            if (e.EventType == "Withdrawn" && amount > s.Balance) throw new System.InvalidOperationException("overdraft");
            s.Balance += e.EventType == "Withdrawn" ? -amount : amount;
            return s;
        }
    }
}`;

async function rejectFigures(checkouts: Checkout[]): Promise<void> {
  console.log(`\n## reject: ${REJECTS} appends per kind, one in flight (ms; µs CPU per append)`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of round % 2 ? checkouts : [...checkouts].reverse()) {
      const s = await service(c);
      try {
        const key = await s.tenant();
        await deployed(s.url, key, 'reducers', zipSources([{ path: 'Account.cs', content: OVERDRAFT }]));
        const kinds: string[] = [];
        for (const [label, eventType, value] of [
          ['accepted', 'Deposited', 1],
          ['refused', 'Withdrawn', 1_000_000],
        ] as const) {
          const lat: number[] = [];
          const statuses = new Set<number>();
          const cpu0 = cpuMsOf(s.pid);
          for (let i = 0; i < REJECTS; i++) {
            const t = performance.now();
            const r = await call(`${s.url}/events`, 'POST', key, {
              aggregateId: `account-${i % 20}`,
              aggregateType: 'account',
              eventType,
              data: { value },
            });
            lat.push(performance.now() - t);
            statuses.add(r.status);
          }
          const cpuUs = ((cpuMsOf(s.pid) - cpu0) * 1000) / REJECTS;
          kinds.push(`${label} [${[...statuses].join(',')}] p50 ${fmt(median(lat), 2)} p99 ${fmt(pct(lat, 99), 2)}, ${fmt(cpuUs)} µs`);
        }
        console.log(`  round ${round} ${c.label}: ${kinds.join('; ')}`);
      } finally {
        await s.stop();
      }
    }
  }
}

async function main(): Promise<void> {
  const checkouts = checkoutsUnderTest();
  if (parts.has('compile')) await compileFigures(checkouts);
  if (parts.has('keys')) await keysFigures(checkouts[checkouts.length - 1]);
  if (parts.has('reject')) await rejectFigures(checkouts);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
