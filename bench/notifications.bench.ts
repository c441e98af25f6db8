import { ChildProcess, execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import { WebhookSigner } from '../src/notifications/webhook-signer';
import { exampleSources } from '../test/support/runtime-harness';
import { zipSources } from '../test/support/zip-writer';
import { fmt, startChild, stopChild } from './bench-util';

/**
 * Notifications on the embedded default (SQLite store, in-process lanes), the service as a child
 * process. The WebSocket clients and the webhook receiver run in a worker thread of this process,
 * so the main thread's append pacing and acknowledgement timestamps are not delayed by the
 * ~100k messages/s the clients parse; both threads stamp with the same clock
 * (performance.timeOrigin + performance.now()).
 *
 *   1. 1,000 appends/s for 10 s, 100 WebSocket clients: append → message latency, completeness.
 *   2. The same rate, a signature-verifying local webhook receiver: append → delivery latency.
 *   3. Polling the whole log from 4 readers vs reading events by aggregate, same page size.
 *   4. Service RSS with 1,000 idle WebSocket clients vs none.
 */

const ADMIN = 'bench-admin-token-0123456789';
const RATE = Number(process.env.NOTIFY_RATE ?? 1000);
const SECONDS = Number(process.env.NOTIFY_SECONDS ?? 10);
const WS_CLIENTS = Number(process.env.NOTIFY_WS_CLIENTS ?? 100);
const IDLE_CLIENTS = Number(process.env.NOTIFY_IDLE_CLIENTS ?? 1000);
const CUSTOMERS = 1000;
// Each measured run follows a warm-up at the same rate (new lanes, JIT in Node and .NET); the
// warm-up's own figures are printed too, as the cold figure.
const WARM_RATE = Number(process.env.NOTIFY_WARM_RATE ?? RATE);
const WARM_SECONDS = 3;
const READERS = 4;
const READ_SECONDS = Number(process.env.NOTIFY_READ_SECONDS ?? 10);
const PAGE = 1000;
const BASELINE_EVENTS = 10_000;
const TARGET_P99_MS = 50;
const WATCHDOG_MS = 6 * 60_000;
/** Which parts run (for profiling one of them): memory, ws, webhook, poll. */
const PHASES = new Set((process.env.NOTIFY_PHASES ?? 'memory,ws,webhook,poll').split(',').map((x) => x.trim()));

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Offset of the low-rate appends' indexes (order-l<i>) among the recorded samples. */
const LOW = 10_000_000;

/** Index of an appended order id: order-m<i> → i (measured), order-l<i> → LOW + i (low rate), else -1. */
function orderIndex(aggregateId: string): number {
  const tag = aggregateId.slice(0, 7);
  const i = parseInt(aggregateId.slice(7), 10);
  if (!Number.isFinite(i)) return -1;
  return tag === 'order-m' ? i : tag === 'order-l' ? LOW + i : -1;
}

/** Sequence and order index from a prefix of the message (cheaper than JSON.parse at ~100k messages/s). */
function parseMessage(prefix: string): { sequence: number; index: number } {
  const s = prefix.indexOf('"sequence":');
  const sequence = s < 0 ? NaN : parseInt(prefix.slice(s + 11, s + 30), 10);
  const a = prefix.indexOf('"aggregateId":"');
  const index = a < 0 ? -1 : orderIndex(prefix.slice(a + 15, prefix.indexOf('"', a + 15)));
  return { sequence, index };
}

// ───────────────────────────── worker thread: WebSocket clients, webhook receiver ─────────────────────────────

interface ClientState {
  socket: WebSocket;
  after: number;
  seen: Uint8Array;
  beyond: number;
  regressions: number;
  maxSeq: number;
  received: number;
  closeCode: number | null;
}

function workerMain(): void {
  const port = parentPort!;
  let clients: ClientState[] = [];
  let recording = false;
  let sIdx = new Int32Array(1 << 20);
  let sT = new Float64Array(1 << 20);
  let sN = 0;
  const push = (i: number, t: number) => {
    if (sN === sIdx.length) {
      const ni = new Int32Array(sIdx.length * 2);
      ni.set(sIdx);
      const nt = new Float64Array(sT.length * 2);
      nt.set(sT);
      sIdx = ni;
      sT = nt;
    }
    sIdx[sN] = i;
    sT[sN++] = t;
  };

  // Webhook receiver state.
  let server: http.Server | null = null;
  let secret = '';
  const hookCounts = new Map<number, number>();
  let hookRejected = 0;
  let hookIdx: number[] = [];
  let hookT: number[] = [];
  let hookLastAt = 0;

  function open(
    base: string,
    projectionId: string,
    key: string,
    after: number | null,
    capacity: number,
    record: boolean,
  ): Promise<ClientState> {
    const q = after === null ? '' : `?afterSequence=${after}`;
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/projections/${encodeURIComponent(projectionId)}/stream${q}`, {
      headers: { 'x-api-key': key },
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
    });
    const c: ClientState = {
      socket,
      after: after ?? 0,
      seen: new Uint8Array(record ? capacity : 0),
      beyond: 0,
      regressions: 0,
      maxSeq: after ?? 0,
      received: 0,
      closeCode: null,
    };
    socket.on('message', (raw) => {
      const t = now();
      const data = raw as Buffer;
      const prefix = data.toString('latin1', 0, Math.min(data.length, 256));
      if (prefix.startsWith('{"type":"ping"')) {
        socket.send('{"type":"pong"}');
        return;
      }
      let { sequence, index } = parseMessage(prefix);
      if (!Number.isFinite(sequence)) {
        const m = JSON.parse(data.toString()) as { type?: string; sequence?: number; aggregateId?: string };
        if (m.type === 'ping') {
          socket.send('{"type":"pong"}');
          return;
        }
        sequence = Number(m.sequence);
        index = m.aggregateId ? orderIndex(m.aggregateId) : -1;
      }
      c.received++;
      if (sequence < c.maxSeq) c.regressions++;
      else c.maxSeq = sequence;
      if (!record) return;
      const k = sequence - c.after - 1;
      if (k >= 0 && k < c.seen.length) {
        if (c.seen[k] < 255) c.seen[k]++;
      } else c.beyond++;
      if (recording && index >= 0) push(index, t);
    });
    socket.on('close', (code) => (c.closeCode = code));
    socket.on('error', () => undefined);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(c));
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      socket.once('error', reject);
    });
  }

  const handlers: Record<string, (a: any) => Promise<unknown>> = {
    async wsOpen(a: {
      base: string;
      projectionId: string;
      key: string;
      after: number | null;
      count: number;
      capacity: number;
      record: boolean;
    }) {
      const t0 = now();
      let failed = 0;
      let firstError = '';
      for (let i = 0; i < a.count; i += 50) {
        const batch = await Promise.allSettled(
          Array.from({ length: Math.min(50, a.count - i) }, () => open(a.base, a.projectionId, a.key, a.after, a.capacity, a.record)),
        );
        for (const r of batch) {
          if (r.status === 'fulfilled') clients.push(r.value);
          else {
            failed++;
            firstError ||= String(r.reason?.message ?? r.reason);
          }
        }
      }
      return { opened: clients.length, failed, firstError, ms: now() - t0 };
    },
    async record(a: { on: boolean }) {
      recording = a.on;
      return null;
    },
    async wsWait(a: { target: number; timeoutMs: number }) {
      const t0 = now();
      while (now() - t0 < a.timeoutMs) {
        if (clients.every((c) => c.maxSeq >= a.target)) break;
        await sleep(20);
      }
      return { reached: clients.filter((c) => c.maxSeq >= a.target).length, at: now() };
    },
    async wsCollect(a: { target: number }) {
      const per = clients.map((c) => {
        const span = Math.min(a.target - c.after, c.seen.length);
        let missing = Math.max(0, a.target - c.after - c.seen.length);
        let duplicates = 0;
        for (let k = 0; k < span; k++) {
          if (c.seen[k] === 0) missing++;
          else duplicates += c.seen[k] - 1;
        }
        return { received: c.received, missing, duplicates, regressions: c.regressions, beyond: c.beyond, closeCode: c.closeCode };
      });
      const idx = sIdx.slice(0, sN);
      const t = sT.slice(0, sN);
      sN = 0;
      return { per, idx, t };
    },
    async wsClose() {
      await Promise.all(
        clients.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.socket.readyState === WebSocket.CLOSED) return resolve();
              const cut = setTimeout(() => {
                c.socket.terminate();
                resolve();
              }, 3000);
              c.socket.once('close', () => {
                clearTimeout(cut);
                resolve();
              });
              c.socket.close();
            }),
        ),
      );
      clients = [];
      return null;
    },
    async hookStart() {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (d: Buffer) => chunks.push(d));
        req.on('end', () => {
          const t = now();
          const body = Buffer.concat(chunks).toString();
          const headers = req.headers as Record<string, string | undefined>;
          if (!secret || !WebhookSigner.verify(secret, headers, body)) {
            hookRejected++;
            res.writeHead(401).end();
            return;
          }
          const sequence = Number(headers['webhook-sequence']);
          hookCounts.set(sequence, (hookCounts.get(sequence) ?? 0) + 1);
          hookLastAt = t;
          const { index } = parseMessage(body.slice(0, 256));
          if (index >= 0) {
            hookIdx.push(index);
            hookT.push(t);
          }
          res.writeHead(204).end();
        });
      });
      server.keepAliveTimeout = 30_000;
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    },
    async hookSecret(a: { secret: string }) {
      secret = a.secret;
      return null;
    },
    async hookWait(a: { target: number; timeoutMs: number }) {
      const t0 = now();
      while (now() - t0 < a.timeoutMs && hookCounts.size < a.target) await sleep(20);
      return { distinct: hookCounts.size };
    },
    async hookCollect(a: { from: number; to: number }) {
      let missing = 0;
      let duplicates = 0;
      for (let s = a.from; s <= a.to; s++) {
        const n = hookCounts.get(s) ?? 0;
        if (n === 0) missing++;
        else duplicates += n - 1;
      }
      const r = {
        missing,
        duplicates,
        rejected: hookRejected,
        distinct: hookCounts.size,
        lastAt: hookLastAt,
        idx: Int32Array.from(hookIdx),
        t: Float64Array.from(hookT),
      };
      hookIdx = [];
      hookT = [];
      return r;
    },
    async hookStop() {
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server!.close(r));
      }
      return null;
    },
  };

  port.on('message', (m: { id: number; cmd: string; args: unknown }) => {
    handlers[m.cmd](m.args).then(
      (result) => {
        const transfer =
          result && typeof result === 'object'
            ? Object.values(result)
                .filter((v): v is ArrayBufferView => ArrayBuffer.isView(v))
                .map((v) => v.buffer as ArrayBuffer)
            : [];
        port.postMessage({ id: m.id, ok: true, result }, transfer);
      },
      (e: unknown) => port.postMessage({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) }),
    );
  });
}

class ClientThread {
  private readonly worker = new Worker(__filename);
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor() {
    this.worker.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(new Error(m.error));
    });
    this.worker.on('error', (e) => {
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    });
  }

  call<T = any>(cmd: string, args: unknown = {}, timeoutMs = 120_000): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`client thread: ${cmd} timed out`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.worker.postMessage({ id, cmd, args });
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

// ───────────────────────────── main thread: the service, appends, reads ─────────────────────────────

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(url: string, method: string, key: string, body?: unknown, timeoutMs = 15_000): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function call(url: string, method: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await request(url, method, key, body);
  return { status: r.status, body: r.text ? JSON.parse(r.text) : null };
}

async function tenant(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (!r.ok) throw new Error(`tenant: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { apiKey: string }).apiKey;
}

async function deploy(url: string, key: string, config?: unknown): Promise<{ projectionId: string; secret: string | null }> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
  if (config) form.append('config', JSON.stringify(config));
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const up = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(up)}`);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const st = await call(`${url}/projections/${up.uploadId}/status`, 'GET', key);
    if (st.body?.status === 'failed') throw new Error(`compile failed: ${JSON.stringify(st.body)}`);
    if (st.body?.status === 'compiled' && st.body.projectionId)
      return { projectionId: st.body.projectionId, secret: up.notifications?.webhook?.secret ?? null };
    await sleep(100);
  }
  throw new Error('projection did not deploy within 120 s');
}

/** The last sequence in the projection's log, paging from `from`. */
async function head(url: string, key: string, projectionId: string, from = 0): Promise<number> {
  let after = from;
  for (;;) {
    const r = await call(`${url}/projections/${projectionId}/notifications?afterSequence=${after}&limit=${PAGE}`, 'GET', key);
    if (r.status !== 200) throw new Error(`notifications: ${r.status} ${JSON.stringify(r.body)}`);
    const ns = r.body.notifications as { sequence: number }[];
    if (ns.length === 0) return after;
    after = ns[ns.length - 1].sequence;
  }
}

async function waitHead(url: string, key: string, projectionId: string, target: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let h = await head(url, key, projectionId);
  while (h < target && Date.now() < deadline) {
    await sleep(50);
    h = await head(url, key, projectionId, h);
  }
  return h;
}

interface Paced {
  sendAt: Float64Array;
  ackAt: Float64Array;
  ok: number;
  failed: number;
  firstError: string;
  /** Achieved send rate (the pacing can fall behind on a loaded machine). */
  rate: number;
}

/** `rate` single appends per second for `seconds` (open loop), OrderPlaced of order-<tag><i> for customer c-<i mod CUSTOMERS>. */
async function paced(url: string, key: string, tag: string, rate: number, seconds: number): Promise<Paced> {
  const total = Math.round(rate * seconds);
  const sendAt = new Float64Array(total);
  const ackAt = new Float64Array(total).fill(NaN);
  let ok = 0;
  let failed = 0;
  let firstError = '';
  const inflight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    sendAt[i] = now();
    inflight.push(
      request(`${url}/events`, 'POST', key, {
        aggregateId: `order-${tag}${i}`,
        eventType: 'OrderPlaced',
        data: { customerId: `c-${i % CUSTOMERS}`, lines: [{ sku: 'x', qty: 1, price: (i % 7) + 1 }] },
      }).then(
        (r) => {
          if (r.status === 201) {
            ackAt[i] = now();
            ok++;
          } else {
            failed++;
            firstError ||= `${r.status} ${r.text.slice(0, 200)}`;
          }
        },
        (e: Error) => {
          failed++;
          firstError ||= e.message;
        },
      ),
    );
  }
  const sent = (performance.now() - start) / 1000;
  await Promise.all(inflight);
  return { sendAt, ackAt, ok, failed, firstError, rate: total / Math.max(sent, 1e-9) };
}

function sortedOf(xs: ArrayLike<number>): Float64Array {
  return Float64Array.from(xs).sort();
}
const pct = (sorted: Float64Array, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
const ms = (x: number) => (Number.isFinite(x) ? fmt(x, 1) : 'n/a');

function ackLatencies(p: Paced): Float64Array {
  const xs: number[] = [];
  for (let i = 0; i < p.sendAt.length; i++) if (!Number.isNaN(p.ackAt[i])) xs.push(p.ackAt[i] - p.sendAt[i]);
  return sortedOf(xs);
}

/** Per received message of a measured append: (receivedAt − sentAt) and (receivedAt − ackAt). */
function deliveryLatencies(
  p: Paced,
  idx: Int32Array,
  t: Float64Array,
  offset = 0,
): { fromSend: Float64Array; fromAck: Float64Array; beforeAck: number; timeline: string } {
  const fromSend = new Float64Array(idx.length);
  const fromAck = new Float64Array(idx.length);
  const bySecond: number[][] = [];
  let n = 0;
  let beforeAck = 0;
  for (let k = 0; k < idx.length; k++) {
    const i = idx[k] - offset;
    if (i < 0 || i >= p.sendAt.length || Number.isNaN(p.ackAt[i])) continue;
    fromSend[n] = t[k] - p.sendAt[i];
    fromAck[n] = t[k] - p.ackAt[i];
    if (fromAck[n] < 0) beforeAck++;
    (bySecond[Math.floor((p.sendAt[i] - p.sendAt[0]) / 1000)] ??= []).push(fromAck[n]);
    n++;
  }
  const timeline = Array.from(bySecond, (xs) => {
    const sorted = sortedOf(xs ?? []);
    return `${ms(pct(sorted, 50))}/${ms(pct(sorted, 99))}`;
  }).join(', ');
  return { fromSend: fromSend.slice(0, n).sort(), fromAck: fromAck.slice(0, n).sort(), beforeAck, timeline };
}

/** Append send → ack, p50/p99 per second of the run. */
function ackTimeline(p: Paced): string {
  const bySecond: number[][] = [];
  for (let i = 0; i < p.sendAt.length; i++)
    if (!Number.isNaN(p.ackAt[i])) (bySecond[Math.floor((p.sendAt[i] - p.sendAt[0]) / 1000)] ??= []).push(p.ackAt[i] - p.sendAt[i]);
  return Array.from(bySecond, (xs) => {
    const sorted = sortedOf(xs ?? []);
    return `${ms(pct(sorted, 50))}/${ms(pct(sorted, 99))}`;
  }).join(', ');
}

// ── /proc readings of the service ──

const CLK_TCK = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}
function fdCount(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}
function fdLimit(pid: number | 'self'): string {
  const m = /Max open files\s+(\S+)\s+(\S+)/.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'));
  return m ? `${m[1]} soft / ${m[2]} hard` : 'unknown';
}
/** CPU seconds of a process and all its descendants (the service and its .NET executors). */
function treeCpu(root: number): { service: number; mainThread: number; children: number } {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(f[1]));
      cpu.set(Number(d), (Number(f[11]) + Number(f[12])) / CLK_TCK);
    } catch {
      /* gone */
    }
  }
  let children = 0;
  for (const [pid] of cpu) {
    if (pid === root) continue;
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        children += cpu.get(pid) ?? 0;
        break;
      }
    }
  }
  let mainThread = 0;
  try {
    const stat = fs.readFileSync(`/proc/${root}/task/${root}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    mainThread = (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    /* gone */
  }
  return { service: cpu.get(root) ?? 0, mainThread, children };
}

class CpuMeter {
  private readonly t0 = performance.now();
  private readonly tree0: { service: number; mainThread: number; children: number };
  private readonly self0 = process.cpuUsage();
  constructor(private readonly pid: number) {
    this.tree0 = treeCpu(pid);
  }
  read(): string {
    const secs = (performance.now() - this.t0) / 1000;
    const tree = treeCpu(this.pid);
    const self = process.cpuUsage(this.self0);
    const p = (x: number) => `${fmt((100 * x) / secs)} %`;
    return `CPU over ${fmt(secs, 1)} s: service ${p(tree.service - this.tree0.service)} (its main thread ${p(tree.mainThread - this.tree0.mainThread)}), its .NET executors ${p(tree.children - this.tree0.children)}, bench process ${p((self.user + self.system) / 1e6)} (of 200 %)`;
  }
}

// ── phase 3: reading ──

interface ReadFigures {
  itemsPerSec: number;
  pagesPerSec: number;
  p50: number;
  p99: number;
  bytesPerItem: number;
  errors: number;
}

/** `READERS` loops for `seconds`, each paging with `page(cursor)` and starting over at the end. */
async function readLoop(
  seconds: number,
  page: (cursor: number) => Promise<{ items: number; next: number | null; bytes: number; ok: boolean }>,
): Promise<ReadFigures> {
  const lat: number[] = [];
  let items = 0;
  let pages = 0;
  let bytes = 0;
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      let cursor = 0;
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await page(cursor);
        lat.push(performance.now() - t0);
        if (!r.ok) {
          errors++;
          cursor = 0;
          continue;
        }
        pages++;
        items += r.items;
        bytes += r.bytes;
        cursor = r.next ?? 0;
      }
    }),
  );
  const secs = (performance.now() - start) / 1000;
  const s = sortedOf(lat);
  return {
    itemsPerSec: items / secs,
    pagesPerSec: pages / secs,
    p50: pct(s, 50),
    p99: pct(s, 99),
    bytesPerItem: items ? bytes / items : NaN,
    errors,
  };
}

// ── main ──

let serviceChild: ChildProcess | undefined;

async function main(): Promise<void> {
  const started = Date.now();
  const cmd = 'npm run bench:notifications';
  console.log(`# notifications benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}`);
  console.log(
    `# SQLite store, in-process lanes, customer-totals example, service = child process; clients + webhook receiver in a worker thread of the bench`,
  );
  console.log(
    `# ${fmt(RATE)} appends/s × ${SECONDS} s, ${CUSTOMERS} customers (state keys), ${WS_CLIENTS} WebSocket clients; ${IDLE_CLIENTS} idle clients for memory; command: \`${cmd}\`\n`,
  );

  const clients = new ClientThread();
  const hookUrl = await clients.call<string>('hookStart');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-notify-'));
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  serviceChild = child;
  const pid = child.pid!;
  const rows: string[] = [];
  const notes: string[] = [];
  const row = (...cells: string[]) => rows.push(`| ${cells.join(' | ')} |`);
  try {
    console.log(`fd limit: bench ${fdLimit('self')}, service ${fdLimit(pid)}`);
    const keyA = await tenant(url, 'bench-ws');
    const keyB = await tenant(url, 'bench-webhook');
    const keyC = await tenant(url, 'bench-read');
    const a = await deploy(url, keyA);
    const b = await deploy(url, keyB, { notifications: { webhook: { url: hookUrl } } });
    if (!b.secret) throw new Error('the upload response carried no notifications.webhook.secret');
    await clients.call('hookSecret', { secret: b.secret });
    console.log(
      `deployed: ws projection ${a.projectionId}, webhook projection ${b.projectionId} (${fmt((Date.now() - started) / 1000, 1)} s since start)`,
    );

    // Baseline data for phase 3 (tenant C has no projection): one aggregate of BASELINE_EVENTS events.
    for (let v = 0; v < BASELINE_EVENTS; v += 100) {
      const events = Array.from({ length: 100 }, (_, j) => ({
        eventType: 'OrderPlaced',
        data: { customerId: `c-${(v + j) % CUSTOMERS}`, lines: [{ sku: 'x', qty: 1, price: ((v + j) % 7) + 1 }] },
      }));
      const r = await call(`${url}/events/batch`, 'POST', keyC, { aggregateId: 'ledger-big', events });
      if (r.status !== 201) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body)}`);
    }

    // Warm-up of appends, lanes, the executor and the log on projection A.
    const w0 = await paced(url, keyA, 'w0-', WARM_RATE, WARM_SECONDS);
    if (w0.failed) throw new Error(`warm-up appends failed: ${w0.firstError}`);
    let headA = await waitHead(url, keyA, a.projectionId, w0.ok, 30_000);
    if (headA !== w0.ok) throw new Error(`projection A log head ${headA}, expected ${w0.ok}`);

    // ── 4. memory with idle WebSocket clients (first, while the service is quiet) ──
    if (PHASES.has('memory')) {
      await sleep(3000);
      const rss0 = rssKiB(pid);
      const fd0 = fdCount(pid);
      const o = await clients.call('wsOpen', {
        base: url,
        projectionId: a.projectionId,
        key: keyA,
        after: null,
        count: IDLE_CLIENTS,
        capacity: 0,
        record: false,
      });
      await sleep(5000);
      const rss1 = rssKiB(pid);
      const fd1 = fdCount(pid);
      await clients.call('wsClose');
      await sleep(2000);
      const rss2 = rssKiB(pid);
      const fd2 = fdCount(pid);
      const perConn = (rss1 - rss0) / Math.max(1, o.opened);
      console.log(
        `[memory] ${o.opened} idle clients opened in ${fmt(o.ms)} ms (${o.failed} failed${o.firstError ? `: ${o.firstError}` : ''}); service RSS ${fmt(rss0 / 1024, 1)} → ${fmt(rss1 / 1024, 1)} MiB (${fmt(perConn, 1)} KiB per connection); fds ${fd0} → ${fd1}; 2 s after closing: RSS ${fmt(rss2 / 1024, 1)} MiB, fds ${fd2}`,
      );
      row('4. service RSS, no stream clients (baseline)', `${fmt(rss0 / 1024, 1)} MiB (${fd0} fds)`, '—', '—', '—');
      row(
        `4. service RSS, ${fmt(o.opened)} idle WebSocket clients (5 s settled)`,
        `${fmt(rss1 / 1024, 1)} MiB (${fd1} fds)`,
        `+${fmt((rss1 - rss0) / 1024, 1)} MiB`,
        '—',
        '—',
      );
      row('4. per idle connection', `${fmt(perConn, 1)} KiB`, '—', '—', '—');
      if (o.failed) notes.push(`${o.failed} of ${IDLE_CLIENTS} idle connections failed: ${o.firstError}`);
    }

    // ── 1. WebSocket latency and completeness ──
    if (PHASES.has('ws')) {
      const s0 = headA;
      const expected = Math.round(WARM_RATE * WARM_SECONDS + RATE * SECONDS);
      const o = await clients.call('wsOpen', {
        base: url,
        projectionId: a.projectionId,
        key: keyA,
        after: s0,
        count: WS_CLIENTS,
        capacity: expected + 100,
        record: true,
      });
      if (o.failed) throw new Error(`${o.failed} WebSocket clients failed to connect: ${o.firstError}`);
      await clients.call('record', { on: true });
      const w1 = await paced(url, keyA, 'l', WARM_RATE, WARM_SECONDS);
      await clients.call('wsWait', { target: s0 + w1.ok, timeoutMs: 15_000 });
      const cpu = new CpuMeter(pid);
      const m = await paced(url, keyA, 'm', RATE, SECONDS);
      const lastAck = now();
      const target = s0 + w1.ok + m.ok;
      const waited = await clients.call('wsWait', { target, timeoutMs: 30_000 }, 60_000);
      const cpuText = cpu.read();
      await clients.call('record', { on: false });
      const col = await clients.call('wsCollect', { target });
      await clients.call('wsClose');
      headA = await head(url, keyA, a.projectionId, s0);
      const per = col.per as {
        received: number;
        missing: number;
        duplicates: number;
        regressions: number;
        beyond: number;
        closeCode: number | null;
      }[];
      const sum = (f: (x: (typeof per)[number]) => number) => per.reduce((n, x) => n + f(x), 0);
      const missing = sum((x) => x.missing);
      const dups = sum((x) => x.duplicates);
      const regress = sum((x) => x.regressions);
      const beyond = sum((x) => x.beyond);
      const closed = per.filter((x) => x.closeCode !== null).length;
      const ack = ackLatencies(m);
      const d = deliveryLatencies(m, col.idx, col.t);
      const low = deliveryLatencies(w1, col.idx, col.t, LOW);
      const lowAck = ackLatencies(w1);
      const tail = waited.at - lastAck;
      console.log(
        `[websocket] sent at ${fmt(m.rate)}/s, ${fmt(m.ok)} acked, ${m.failed} failed${m.firstError ? ` (${m.firstError})` : ''}; log head ${headA} (expected ${target}); ${waited.reached}/${per.length} clients reached it, the last ${fmt(tail)} ms after the last ack`,
      );
      console.log(
        `[websocket] ${fmt(d.fromAck.length)} latency samples (expected ${fmt(m.ok * per.length)}); ${fmt(d.beforeAck)} messages arrived before their own ack; per client: missing ${missing}, duplicates ${dups}, out of order ${regress}, beyond range ${beyond}, closed early ${closed}`,
      );
      console.log(`[websocket] ${cpuText}`);
      console.log(
        `[websocket] at ${fmt(RATE)}/s, p50/p99 ms by second of the run — ack → message: ${d.timeline}; send → ack: ${ackTimeline(m)}`,
      );
      console.log(
        `[websocket] at ${WARM_RATE}/s (warm-up before the measured run) — ack → message p50 ${ms(pct(low.fromAck, 50))} / p99 ${ms(pct(low.fromAck, 99))} ms, send → ack p50 ${ms(pct(lowAck, 50))} / p99 ${ms(pct(lowAck, 99))} ms`,
      );
      const met = (x: number) => (x <= TARGET_P99_MS ? 'yes' : '**no**');
      row(`1. append send → 201 ack (baseline), ${fmt(RATE)}/s`, `p50 ${ms(pct(ack, 50))} / p99 ${ms(pct(ack, 99))} ms`, '—', '—', '—');
      row(
        `1. append ack → WebSocket message, ${WS_CLIENTS} clients`,
        `p50 ${ms(pct(d.fromAck, 50))} / p99 ${ms(pct(d.fromAck, 99))} ms`,
        `ack p99 ${ms(pct(ack, 99))} ms`,
        `p99 ≤ ${TARGET_P99_MS} ms`,
        met(pct(d.fromAck, 99)),
      );
      row(
        `1. cold: the ${WARM_SECONDS} s warm-up at ${WARM_RATE}/s before it: ack → message`,
        `p50 ${ms(pct(low.fromAck, 50))} / p99 ${ms(pct(low.fromAck, 99))} ms`,
        `ack p50 ${ms(pct(lowAck, 50))} / p99 ${ms(pct(lowAck, 99))} ms`,
        '—',
        '—',
      );
      row(
        `1. append send → WebSocket message`,
        `p50 ${ms(pct(d.fromSend, 50))} / p99 ${ms(pct(d.fromSend, 99))} ms`,
        `ack p99 ${ms(pct(ack, 99))} ms`,
        `p99 ≤ ${TARGET_P99_MS} ms`,
        met(pct(d.fromSend, 99)),
      );
      const complete = missing + dups + regress + beyond === 0 && waited.reached === per.length && d.fromAck.length === m.ok * per.length;
      row(
        '1. every client every sequence once, in order',
        `${fmt(sum((x) => x.received))} messages to ${per.length} clients; missing ${missing}, duplicates ${dups}, out of order ${regress}`,
        `${fmt(target - s0)} sequences × ${per.length}`,
        '0 / 0 / 0',
        complete ? 'yes' : '**no**',
      );
      if (m.failed) notes.push(`websocket phase: ${m.failed} appends failed (${m.firstError})`);
      if (m.rate < RATE * 0.95) notes.push(`websocket phase: the pacing reached only ${fmt(m.rate)} appends/s`);
    }

    // ── 2. webhooks ──
    if (PHASES.has('webhook')) {
      const w = await paced(url, keyB, 'l', WARM_RATE, WARM_SECONDS);
      const warmed = await clients.call('hookWait', { target: w.ok, timeoutMs: 30_000 });
      if (warmed.distinct < w.ok) notes.push(`webhook warm-up: only ${warmed.distinct} of ${w.ok} delivered within 30 s`);
      const lowCol = await clients.call('hookCollect', { from: 1, to: 0 });
      const low = deliveryLatencies(w, lowCol.idx, lowCol.t, LOW);
      const cpu = new CpuMeter(pid);
      const m = await paced(url, keyB, 'm', RATE, SECONDS);
      const lastAck = now();
      const total = w.ok + m.ok;
      const deliveredAtLastAck = (await clients.call('hookWait', { target: 0, timeoutMs: 0 })).distinct;
      const done = await clients.call('hookWait', { target: total, timeoutMs: 45_000 }, 60_000);
      const cpuText = cpu.read();
      const col = await clients.call('hookCollect', { from: 1, to: total });
      const ack = ackLatencies(m);
      const d = deliveryLatencies(m, col.idx, col.t);
      const firstSend = m.sendAt[0];
      const span = (col.lastAt - firstSend) / 1000;
      const drained = done.distinct >= total;
      console.log(
        `[webhook] sent at ${fmt(m.rate)}/s, ${fmt(m.ok)} acked, ${m.failed} failed; delivered ${fmt(done.distinct)} of ${fmt(total)} sequences (${fmt(deliveredAtLastAck)} by the last ack); ${drained ? `last delivery ${fmt((col.lastAt - lastAck) / 1000, 1)} s after the last ack` : 'NOT drained within 45 s'}; missing ${col.missing}, duplicates ${col.duplicates}, bad signatures ${col.rejected}`,
      );
      console.log(
        `[webhook] ${fmt(d.fromAck.length)} latency samples; ${fmt(d.beforeAck)} deliveries arrived before their own ack; ${cpuText}`,
      );
      console.log(
        `[webhook] at ${fmt(RATE)}/s, p50/p99 ms by second of the run — ack → received: ${d.timeline}; send → ack: ${ackTimeline(m)}`,
      );
      console.log(
        `[webhook] at ${WARM_RATE}/s (warm-up before the measured run) — ack → received p50 ${ms(pct(low.fromAck, 50))} / p99 ${ms(pct(low.fromAck, 99))} ms`,
      );
      row(`2. append send → 201 ack (baseline), ${fmt(RATE)}/s`, `p50 ${ms(pct(ack, 50))} / p99 ${ms(pct(ack, 99))} ms`, '—', '—', '—');
      row(
        '2. append ack → webhook received (signature verified)',
        `p50 ${ms(pct(d.fromAck, 50))} / p99 ${ms(pct(d.fromAck, 99))} ms`,
        `ack p99 ${ms(pct(ack, 99))} ms`,
        '—',
        '—',
      );
      row(
        `2. cold: the ${WARM_SECONDS} s warm-up at ${WARM_RATE}/s before it: ack → webhook received`,
        `p50 ${ms(pct(low.fromAck, 50))} / p99 ${ms(pct(low.fromAck, 99))} ms`,
        '—',
        '—',
        '—',
      );
      row('2. append send → webhook received', `p50 ${ms(pct(d.fromSend, 50))} / p99 ${ms(pct(d.fromSend, 99))} ms`, '—', '—', '—');
      row(
        '2. webhook deliveries',
        `${fmt(done.distinct)} of ${fmt(total)} delivered, ${col.duplicates} duplicates, ${col.rejected} bad signatures; ${fmt(m.ok / Math.max(span, 1e-9))} deliveries/s over the run + drain`,
        `${fmt(m.rate)} appends/s`,
        'all, 0 duplicates',
        col.missing === 0 && col.duplicates === 0 && col.rejected === 0 ? 'yes' : '**no**',
      );
      if (m.failed) notes.push(`webhook phase: ${m.failed} appends failed (${m.firstError})`);
    }

    // ── 3. polling throughput vs reading events ──
    if (PHASES.has('poll')) {
      const logSize = headA;
      const poll = await readLoop(READ_SECONDS, async (cursor) => {
        const r = await request(`${url}/projections/${a.projectionId}/notifications?afterSequence=${cursor}&limit=${PAGE}`, 'GET', keyA);
        if (r.status !== 200) return { ok: false, items: 0, next: null, bytes: 0 };
        const ns = (JSON.parse(r.text) as { notifications: { sequence: number }[] }).notifications;
        return { ok: true, items: ns.length, next: ns.length === PAGE ? ns[ns.length - 1].sequence : null, bytes: r.text.length };
      });
      const events = await readLoop(READ_SECONDS, async (cursor) => {
        const r = await request(`${url}/events/ledger-big?fromVersion=${cursor || 1}&limit=${PAGE}`, 'GET', keyC);
        if (r.status !== 200) return { ok: false, items: 0, next: null, bytes: 0 };
        const body = JSON.parse(r.text) as { events: unknown[]; nextFromVersion?: number };
        return { ok: true, items: body.events.length, next: body.nextFromVersion ?? null, bytes: r.text.length };
      });
      for (const [label, f] of [
        ['notifications', poll],
        ['events', events],
      ] as const) {
        console.log(
          `[polling] ${label}: ${fmt(f.itemsPerSec)} items/s, ${fmt(f.pagesPerSec)} pages/s, page p50 ${ms(f.p50)} / p99 ${ms(f.p99)} ms, ${fmt(f.bytesPerItem)} bytes per item, ${f.errors} errors`,
        );
      }
      row(
        `3. GET /events/{aggregateId}?fromVersion&limit=${PAGE}, ${fmt(BASELINE_EVENTS)}-event aggregate, ${READERS} readers (baseline)`,
        `${fmt(events.itemsPerSec)} events/s (page p50 ${ms(events.p50)} / p99 ${ms(events.p99)} ms, ${fmt(events.bytesPerItem)} B/item)`,
        '—',
        '—',
        '—',
      );
      row(
        `3. GET /projections/{id}/notifications?afterSequence&limit=${PAGE}, ${fmt(logSize)}-entry log, ${READERS} readers`,
        `${fmt(poll.itemsPerSec)} notifications/s (page p50 ${ms(poll.p50)} / p99 ${ms(poll.p99)} ms, ${fmt(poll.bytesPerItem)} B/item)`,
        `${fmt((100 * poll.itemsPerSec) / events.itemsPerSec)} % of events/s`,
        '—',
        poll.errors + events.errors ? `**${poll.errors + events.errors} errors**` : '—',
      );
    }

    console.log(`\n| figure | result | baseline / compare | target | met? |\n|---|---|---|---|---|`);
    // Stable sort: the figures in the brief's order (memory ran first, while the service was quiet).
    console.log(rows.sort((x, y) => x.slice(2, 3).localeCompare(y.slice(2, 3))).join('\n'));
    console.log(`\ncommand: \`${cmd}\` (total ${fmt((Date.now() - started) / 1000, 1)} s)`);
    for (const n of notes) console.log(`note: ${n}`);
  } finally {
    await clients.call('wsClose', {}, 10_000).catch(() => undefined);
    await clients.call('hookStop', {}, 10_000).catch(() => undefined);
    await clients.terminate();
    await Promise.race([stopChild(child), sleep(15_000).then(() => child.kill('SIGKILL'))]);
    agent.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (isMainThread) {
  const kill = () => {
    if (serviceChild && serviceChild.exitCode === null) serviceChild.kill('SIGKILL');
  };
  const watchdog = setTimeout(() => {
    console.error(`notifications benchmark: no result after ${WATCHDOG_MS / 1000} s, giving up`);
    kill();
    process.exit(2);
  }, WATCHDOG_MS);
  watchdog.unref();
  process.on('SIGINT', () => {
    kill();
    process.exit(130);
  });
  process.on('SIGTERM', () => {
    kill();
    process.exit(143);
  });
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      kill();
      process.exit(1);
    },
  );
} else {
  workerMain();
}
