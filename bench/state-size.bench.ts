import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { zipSources } from '../test/support/zip-writer';
import { fixtureSources } from '../test/support/tenant-code';
import { fmt, pct, startChild, stopChild } from './bench-util';

/**
 * A noisy neighbour: tenant A's reducer tries to make a 40 MB state on every append (20 appends in
 * 10 s) while tenant B appends plain events one at a time. Prints B's append latency with A idle
 * and with A busy, and what A's appends got back.
 */
const ADMIN = 'bench-admin-token-0123456789';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BIG_MB = Number(process.env.BIG_STATE_MB ?? 40);
const BIG_APPENDS = 20;

const BIG_REDUCER = fixtureSources('big-state', ['BigReducer.cs'])[0].content;

async function json(url: string, method: string, key: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function tenant(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return ((await r.json()) as { apiKey: string }).apiKey;
}

async function uploadBig(url: string, key: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: 'Big.cs', content: BIG_REDUCER }])]), 'big.zip');
  form.append('reducerId', 'big');
  await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  for (;;) {
    const st = JSON.parse((await json(`${url}/reducers/big/status`, 'GET', key)).text);
    if (st.status === 'compiled') return;
    if (st.status === 'failed') throw new Error(st.compilationError);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Tenant B: one append at a time for `seconds`; latencies in ms. */
async function victim(url: string, key: string, seconds: number): Promise<number[]> {
  const lat: number[] = [];
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t0 = performance.now();
    const r = await json(`${url}/events`, 'POST', key, { aggregateId: `note-${i % 500}`, eventType: 'Noted', data: { i } });
    if (r.status !== 201) throw new Error(`victim append: ${r.status} ${r.text}`);
    lat.push(performance.now() - t0);
  }
  return lat;
}

/** Tenant A: BIG_APPENDS appends spread over `seconds`, each asking for a BIG_MB state. */
async function noisy(url: string, key: string, seconds: number): Promise<{ sizes: number[]; codes: string[]; ms: number[] }> {
  const sizes: number[] = [];
  const codes: string[] = [];
  const ms: number[] = [];
  await Promise.all(
    Array.from({ length: BIG_APPENDS }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i * seconds * 1000) / BIG_APPENDS));
      const t0 = performance.now();
      const r = await json(`${url}/events`, 'POST', key, { aggregateId: `big-${i}`, eventType: 'Grow', data: { mb: BIG_MB } });
      ms.push(performance.now() - t0);
      sizes.push(r.text.length);
      const body = JSON.parse(r.text);
      codes.push(`${r.status} ${body.stateError?.code ?? (body.state ? 'state' : body.error)}`);
    }),
  );
  return { sizes, codes, ms };
}

const row = (name: string, lat: number[]) =>
  `| ${name} | ${lat.length} | ${fmt(pct(lat, 50), 1)} | ${fmt(pct(lat, 99), 1)} | ${fmt(Math.max(...lat), 1)} |`;

async function main(): Promise<void> {
  console.log(
    `# noisy neighbour: ${BIG_MB} MB reducer states — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, SQLite\n`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-state-'));
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir });
  try {
    const a = await tenant(url, 'noisy');
    const b = await tenant(url, 'victim');
    await uploadBig(url, a);
    await json(`${url}/events`, 'POST', a, { aggregateId: 'big-warm', eventType: 'Grow', data: { mb: 0 } });
    await victim(url, b, 2); // warm
    const idle = await victim(url, b, SECONDS);
    const [busy, big] = await Promise.all([victim(url, b, SECONDS), noisy(url, a, SECONDS)]);
    console.log(`| tenant B, sequential POST /events | appends | p50 ms | p99 ms | max ms |`);
    console.log('|---|---:|---:|---:|---:|');
    console.log(row('tenant A idle', idle));
    console.log(row(`tenant A: ${BIG_APPENDS} appends asking for ${BIG_MB} MB states`, busy));
    const codes = [...new Set(big.codes)].map((c) => `${c} ×${big.codes.filter((x) => x === c).length}`).join(', ');
    console.log(
      `\ntenant A's appends: ${codes}; response bytes max ${fmt(Math.max(...big.sizes))}; latency p50 ${fmt(pct(big.ms, 50))} ms, max ${fmt(Math.max(...big.ms))} ms`,
    );
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
