import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { exampleSources } from '../support/runtime-harness';
import { RawHttp } from '../support/raw-http';
import { ADMIN_TOKEN, clientFor, newTenant, ServiceProcess } from '../support/service-harness';
import { zipSources } from '../support/zip-writer';
import { elapse } from '../support/wait';

jest.setTimeout(180_000);

/** No `esk_` prefix: the catch-all for issued keys must not be what hides it. */
const BOOTSTRAP_KEY = 'plain-bootstrap-key-0123456789abcdef';
const WRONG_KEY = 'wrong-key-that-should-not-be-logged-42';

/** Every response header seen, as text, to look for keys in. */
const seenHeaders: string[] = [];

function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      seenHeaders.push(JSON.stringify(res.headers));
      res.resume();
      // A stream never ends: its status is enough.
      if (res.headers['content-type']?.startsWith('text/event-stream')) {
        setTimeout(() => req.destroy(), 200);
        resolve(res.statusCode ?? 0);
      } else res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

function ws(url: string, protocols: string[], headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), protocols, { headers });
    socket.on('upgrade', (res) => seenHeaders.push(JSON.stringify(res.headers)));
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_req, res) => {
      seenHeaders.push(JSON.stringify(res.headers));
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    socket.on('error', () => resolve(0));
  });
}

describe('keys never logged nor echoed, at LOG_LEVEL=trace', () => {
  let svc: ServiceProcess;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-redact-'));
    svc = new ServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'trace', BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, BODY_READ_TIMEOUT_MS: '500' });
    await svc.start();
  }, 120_000);
  afterAll(async () => {
    if (svc?.child.exitCode === null) await svc.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('uses keys in headers, queries and subprotocols, rightly and wrongly, and none reaches a log line or a response header', async () => {
    const issued = await newTenant(svc.url, 'redaction');
    const keys = [BOOTSTRAP_KEY, issued.key];
    for (const key of keys) {
      const c = clientFor(svc.url, key);
      expect((await c.get('/auth/whoami')).status).toBe(200);
      expect((await c.post('/events', { aggregateId: 'note-1', eventType: 'Noted', data: { by: 'test' } })).status).toBe(201);
      // Multipart: its plugin logs the request headers at trace.
      const form = new FormData();
      form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
      form.append('config', JSON.stringify({ sse: true, name: `totals-${keys.indexOf(key)}` }));
      const up = (await (
        await fetch(`${svc.url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })
      ).json()) as any;
      let projectionId: string | undefined;
      for (let i = 0; i < 600 && !projectionId; i++) {
        await elapse(100, 'poll interval: until the projection is deployed');
        projectionId = (await c.get(`/projections/${up.uploadId}/status`)).body.projectionId;
      }
      const stream = `${svc.url}/projections/${projectionId}/stream`;

      expect(await get(`${svc.url}/events/note-1?apiKey=${key}`, { 'x-api-key': key })).toBe(200);
      expect(await get(`${stream}?apiKey=${key}`, { accept: 'text/event-stream' })).toBe(200);
      expect(await get(`${stream}?afterSequence=0&apiKey=${key}`, { accept: 'text/event-stream' })).toBe(200);
      expect(await get(`${svc.url}/no/such/route?apiKey=${key}`)).toBe(404);
      expect(await ws(`${stream}?apiKey=${key}`, [])).toBe(101);
      expect(await ws(stream, [], { 'x-api-key': key })).toBe(101);
      expect(await ws(stream, ['eventstore.v1', `apikey.${key}`])).toBe(101);
      expect(await ws(stream, [`apikey.${key}`])).toBe(400);

      // A body cut by its deadline, with the key in the URL too.
      const raw = new RawHttp(svc.url);
      raw.startPost(`/events?apiKey=${key}`, { 'x-api-key': key, 'content-type': 'application/json', 'content-length': '1000' }, '{');
      expect((await raw.response(10_000)).status).toBe(408);
      raw.destroy();
    }
    expect(await get(`${svc.url}/projections?apiKey=${WRONG_KEY}`)).toBe(401);
    expect(await get(`${svc.url}/auth/whoami`, { 'x-api-key': WRONG_KEY })).toBe(401);
    expect(await ws(`${svc.url}/projections/x/stream?apiKey=${WRONG_KEY}`, [])).toBe(401);
    expect(await ws(`${svc.url}/projections/x/stream`, ['eventstore.v1', `apikey.${WRONG_KEY}`])).toBe(401);
    expect(await get(`${svc.url}/admin/tenants`, { authorization: `Bearer ${ADMIN_TOKEN}` })).toBe(200);
    expect(await get(`${svc.url}/admin/tenants`, { authorization: `Bearer ${WRONG_KEY}` })).toBe(401);

    await elapse(300, "the last requests' log lines are written");
    expect(await svc.kill('SIGTERM')).toBe(0);
    const lines = svc.output.split('\n');
    // Trace logging was on: every request was logged, with its (redacted) URL.
    expect(lines.filter((l) => l.includes('"incoming request"')).length).toBeGreaterThan(30);
    expect(svc.output).toContain('apiKey=[REDACTED]');
    // At trace too, every line on stdout is one JSON object (README "Logs").
    for (const line of svc.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    for (const secret of [...keys, WRONG_KEY, ADMIN_TOKEN]) {
      expect(lines.filter((l) => l.includes(secret))).toEqual([]);
      expect(seenHeaders.filter((h) => h.includes(secret))).toEqual([]);
    }
  });
});
