import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, clientFor, newTenant, request, RunningService, ServiceProcess, startService } from '../support/service-harness';
import { envFor, schedulerEnv, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { isPublicAddress } from '../../src/notifications/webhooks/webhook-url-guard';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { WebhookReceiver } from '../support/webhook-receiver';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50,50,50,50',
  WEBHOOK_POLL_MS: '100',
  STREAM_PING_MS: '1000',
  SSE_HEARTBEAT_MS: '300',
};

export async function uploadProjection(
  c: Client,
  url: string,
  parts: Record<string, string> = {},
  sources = exampleSources('customer-totals'),
) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(sources)]), 'p.zip');
  for (const [k, v] of Object.entries(parts)) form.append(k, v);
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function deployed(c: Client, uploadId: string): Promise<string> {
  const s = await until(
    () => c.get(`/projections/${uploadId}/status`),
    (r) => r.body?.status === 'compiled' && Boolean(r.body.projectionId),
  );
  return s.body.projectionId;
}

async function placeOrders(c: Client, from: number, count: number, customers: number) {
  for (let i = from; i < from + count; i += 20) {
    const batch = [];
    for (let j = i; j < Math.min(i + 20, from + count); j++) {
      batch.push(
        c.post('/events', {
          aggregateId: `order-${j}`,
          eventType: 'OrderPlaced',
          data: { customerId: `cust-${j % customers}`, lines: [{ sku: 'x', qty: 1, price: (j % 7) + 1 }] },
        }),
      );
    }
    for (const r of await Promise.all(batch)) if (r.status !== 201) throw new Error(`append failed: ${JSON.stringify(r)}`);
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Every notification for a key carries that key's running totals, in order. */
function checkRunningTotals(notifications: any[]) {
  const seen = new Map<string, number>();
  for (const n of notifications) {
    const count = (seen.get(n.stateKey) ?? 0) + 1;
    seen.set(n.stateKey, count);
    expect(n.state.OrderCount ?? n.state.orderCount).toBe(count);
  }
}

describe.each(STORE_BACKENDS)('notifications on %s', (backend) => {
  let svc: RunningService;
  let c: Client;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST });
    c = await newTenant(svc.url, `notify-${backend}`);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('logs one notification per change and delivers it once, in order, on polling, WebSocket, SSE and a signed webhook', async () => {
    const up = await uploadProjection(c, svc.url, {
      config: JSON.stringify({ notifications: { webhook: { url: receiver.url, isolateSecret: true }, sse: true } }),
    });
    expect(up.status).toBe(202);
    expect(up.body.notifications).toEqual({
      webhook: { enabled: true, secret: expect.stringMatching(/^whsec_/), isolated: true },
      sse: true,
    });
    receiver.secrets = [up.body.notifications.webhook.secret];
    const projectionId = await deployed(c, up.body.uploadId);

    // History before the projection existed is state, not notifications.
    const ws = await WsCollector.open(svc.url, projectionId, c.key, 0);
    const sse = await SseCollector.open(svc.url, projectionId, c.key, {}, '?afterSequence=0');
    receiver.failFirst.set(3, 3); // the third change fails three times, then succeeds

    const N = 120;
    await placeOrders(c, 0, N, 7);

    const all = await until(
      async () => (await c.get(`/projections/${projectionId}/notifications?afterSequence=0&limit=1000`)).body.notifications as any[],
      (ns) => ns.length >= N,
    );
    expect(all.map((n) => n.sequence)).toEqual(range(1, N));
    expect(new Set(all.map((n) => n.aggregateId)).size).toBe(N);
    for (const n of all) {
      expect(n).toMatchObject({ projectionId, aggregateType: 'order', version: 1, stateKey: expect.stringMatching(/^cust-/) });
      expect(new Date(n.timestamp).toISOString()).toBe(n.timestamp);
    }
    checkRunningTotals(all);

    // Paging: default limit and afterSequence in the middle.
    const page = await c.get(`/projections/${projectionId}/notifications?afterSequence=100&limit=5`);
    expect(page.body.notifications.map((n: any) => n.sequence)).toEqual(range(101, 105));
    expect((await c.get(`/projections/${projectionId}/notifications?afterSequence=${N}`)).body).toEqual({ notifications: [] });

    await until(
      () => ws.messages.length,
      (n) => n >= N,
    );
    expect(ws.sequences()).toEqual(range(1, N));
    expect(ws.messages[0]).toEqual({ type: 'state_changed', ...all[0] });
    await until(
      () => sse.sequences().length,
      (n) => n >= N,
    );
    expect(sse.sequences()).toEqual(range(1, N));
    expect(sse.events[5].data).toEqual({ type: 'state_changed', ...all[5] });

    await until(
      () => receiver.accepted.length,
      (n) => n >= N,
    );
    await elapse(300, 'a duplicate would show up now');
    expect([...receiver.sequences()].sort((a, b) => a - b)).toEqual(range(1, N));
    expect(receiver.attempts.get(3)).toBe(4);
    expect(receiver.rejectedSignatures).toBe(0);
    // Per key, deliveries arrived in sequence order (keys interleave freely).
    const perKey = new Map<string, number>();
    for (const a of receiver.accepted) {
      expect(a.sequence).toBeGreaterThan(perKey.get(a.body.stateKey) ?? 0);
      perKey.set(a.body.stateKey, a.sequence);
      expect(a.body).toEqual({ type: 'state_changed', ...all[a.sequence - 1] });
      expect(a.headers['webhook-id']).toBe(`msg_${projectionId}_${a.sequence}`);
    }
    ws.socket.close();
    sse.close();
  });

  it('resumes a WebSocket and an SSE stream from a cursor with no gap and no duplicate', async () => {
    const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ name: 'resume-totals', sse: true }) });
    const projectionId = await deployed(c, up.body.uploadId);
    const first = await WsCollector.open(svc.url, projectionId, c.key);
    await placeOrders(c, 1000, 30, 5);
    await until(
      () => first.messages.length,
      (n) => n >= 30,
    );
    const cut = first.messages[17].sequence;
    await first.close();

    // While nobody listens, more changes; then resume from the cut, mid-burst.
    const burst = placeOrders(c, 2000, 60, 5);
    const resumed = await WsCollector.open(svc.url, projectionId, c.key, cut);
    const sse = await SseCollector.open(svc.url, projectionId, c.key, { 'last-event-id': String(cut) }, '?afterSequence=0');
    await burst;
    await until(
      () => resumed.messages.length,
      (n) => n >= 90 - cut,
    );
    await until(
      () => sse.sequences().length,
      (n) => n >= 90 - cut,
    );
    await elapse(200, 'time for an event past 90 or a repeat to arrive, which none may');
    expect(resumed.sequences()).toEqual(range(cut + 1, 90));
    expect(sse.sequences()).toEqual(range(cut + 1, 90)); // Last-Event-ID wins over afterSequence
    await until(
      () => sse.comments,
      (n) => n > 0,
    ); // heartbeats (every 300 ms here)
    // Browsers' EventSource cannot set headers: the key may ride in the query on this path (only).
    const browser = await SseCollector.open(svc.url, projectionId, '', {}, `?afterSequence=${cut}&apiKey=${c.key}`);
    await until(
      () => browser.sequences().length,
      (n) => n >= 90 - cut,
    );
    expect(browser.sequences()).toEqual(range(cut + 1, 90));
    browser.close();
    expect((await request(`${svc.url}/projections/${projectionId}/notifications?apiKey=${c.key}`, 'GET')).status).toBe(401);
    await resumed.close();
    sse.close();
  });

  it('refuses bad stream requests with the proper status and code', async () => {
    const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ name: 'no-sse-totals' }) });
    expect(up.body.notifications).toEqual({ webhook: { enabled: false, secret: null, isolated: false }, sse: false });
    const projectionId = await deployed(c, up.body.uploadId);
    await expect(WsCollector.open(svc.url, projectionId, 'esk_wrong')).rejects.toMatchObject({ status: 401 });
    await expect(WsCollector.open(svc.url, 'no-such-projection', c.key)).rejects.toMatchObject({ status: 404 });
    const other = await newTenant(svc.url, 'other');
    await expect(WsCollector.open(svc.url, projectionId, other.key)).rejects.toMatchObject({ status: 404 });
    expect((await other.get(`/projections/${projectionId}/notifications`)).status).toBe(404);
    await expect(SseCollector.open(svc.url, projectionId, c.key)).rejects.toMatchObject({ status: 409, body: { error: 'SSE_DISABLED' } });
    expect((await c.get(`/projections/${projectionId}/stream`)).body.error).toBe('NOT_ACCEPTABLE');
    expect((await c.get(`/projections/${projectionId}/notifications?afterSequence=-1`)).body.error).toBe('VALIDATION_FAILED');
    expect((await c.get(`/projections/${projectionId}/notifications?limit=1001`)).body.error).toBe('VALIDATION_FAILED');
    // Rotation: a projection on the shared secret is told to rotate the tenant's.
    const r = await c.post(`/projections/${projectionId}/webhook/rotate`, {});
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('WEBHOOK_SECRET_SHARED');
  });

  it('rotates secrets with an overlap: receivers switching after the rotation lose nothing', async () => {
    // Its own receiver: the first test's projection keeps delivering to the other one.
    const receiver = await new WebhookReceiver().start();
    try {
      const shared = await uploadProjection(c, svc.url, {
        config: JSON.stringify({ name: 'shared-totals', webhook: { url: receiver.url } }),
      });
      expect(shared.body.notifications.webhook).toEqual({ enabled: true, secret: expect.stringMatching(/^whsec_/), isolated: false });
      const oldShared = shared.body.notifications.webhook.secret;
      const isolated = await uploadProjection(c, svc.url, {
        config: JSON.stringify({ name: 'isolated-totals', webhook: { url: receiver.url, isolateSecret: true } }),
      });
      const oldIsolated = isolated.body.notifications.webhook.secret;
      const sharedId = await deployed(c, shared.body.uploadId);
      const isolatedId = await deployed(c, isolated.body.uploadId);
      receiver.accepted.length = 0;
      receiver.secrets = [oldShared, oldIsolated]; // the receiver knows only the old secrets

      const rp = await c.post(`/projections/${isolatedId}/webhook/rotate`, {});
      expect(rp.status).toBe(200);
      expect(rp.body).toEqual({
        projectionId: isolatedId,
        webhook: { secret: expect.stringMatching(/^whsec_/), isolated: true },
        rotatedAt: expect.any(String),
      });
      const rt = await c.post('/webhooks/rotate', {});
      expect(rt.status).toBe(200);
      expect(rt.body).toEqual({ webhook: { secret: expect.stringMatching(/^whsec_/) }, rotatedAt: expect.any(String) });
      expect(rt.body.webhook.secret).not.toBe(oldShared);

      await placeOrders(c, 5000, 20, 3); // signed with old AND new: the old receiver accepts
      await until(
        () => receiver.accepted.filter((a) => a.verifiedBy >= 0).length,
        (n) => n >= 40,
      );
      receiver.secrets = [rt.body.webhook.secret, rp.body.webhook.secret]; // receiver switches to the new secrets
      await placeOrders(c, 6000, 20, 3);
      await until(
        () => receiver.accepted.length,
        (n) => n >= 80,
      );
      expect(receiver.rejectedSignatures).toBe(0);
      for (const id of [sharedId, isolatedId]) {
        const got = receiver.accepted
          .filter((a) => a.body.projectionId === id)
          .map((a) => a.sequence)
          .sort((a, b) => a - b);
        expect(got).toEqual(range(1, 40));
      }
      const sig = receiver.accepted[receiver.accepted.length - 1].headers['webhook-signature']!;
      expect(sig.split(' ')).toHaveLength(2); // still inside the overlap window: both secrets sign
    } finally {
      await receiver.stop();
    }
  });
});

describe('webhook dead letters (SQLite)', () => {
  let svc: RunningService;
  let c: Client;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // A 1 s timeout: long enough that a loaded machine's answering receiver is not taken for a hanging one.
    svc = await startService({ ...FAST, WEBHOOK_RETRY_BACKOFF_MS: '20,20,20', WEBHOOK_TIMEOUT_MS: '1000' });
    c = await newTenant(svc.url, 'dead-letters');
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('retries a delivery whose receiver does not answer in time', async () => {
    const hanging = await new WebhookReceiver().start();
    try {
      const up = await uploadProjection(c, svc.url, {
        config: JSON.stringify({ name: 'hanging-receiver', webhook: { url: hanging.url } }),
      });
      hanging.secrets = [up.body.notifications.webhook.secret];
      const projectionId = await deployed(c, up.body.uploadId);
      hanging.hangFirst.add(1);
      const t0 = Date.now();
      await placeOrders(c, 100, 1, 1);
      await until(
        () => hanging.accepted.length,
        (n) => n >= 1,
      );
      expect(hanging.attempts.get(1)).toBeGreaterThanOrEqual(2);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000); // the first attempt ran into the 1 s timeout
      // The receiver has answered; the service records it when its attempt returns.
      const d = await until(
        async () => (await c.get(`/projections/${projectionId}/webhook/deliveries`)).body.deliveries[0],
        (x: any) => x?.status === 'delivered',
      );
      expect(d).toMatchObject({ sequence: 1, status: 'delivered' });
      expect(d.attempts).toBeGreaterThanOrEqual(2);
      // Gone from the service, so the dead-letter test below sees only its own deliveries.
      expect((await request(`${svc.url}/projections/${projectionId}`, 'DELETE', undefined, { 'x-api-key': c.key })).status).toBe(204);
    } finally {
      await hanging.stop();
    }
  });

  it('dead-letters a delivery after the last retry, lets its key go on, and replays it on request', async () => {
    const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ webhook: { url: receiver.url } }) });
    receiver.secrets = [up.body.notifications.webhook.secret];
    const projectionId = await deployed(c, up.body.uploadId);
    receiver.failFirst.set(2, 1_000); // sequence 2 always fails
    await placeOrders(c, 0, 10, 1); // one key: every delivery is in that key's order
    await until(
      () => receiver.accepted.length,
      (n) => n >= 9,
    );
    expect(receiver.sequences()).toEqual([1, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(receiver.attempts.get(2)).toBe(4); // 1 + 3 retries
    const dead = await c.get(`/projections/${projectionId}/webhook/deliveries?status=dead`);
    expect(dead.body.deliveries).toEqual([
      {
        sequence: 2,
        stateKey: 'cust-0',
        status: 'dead',
        attempts: 4,
        nextAttemptAt: null,
        lastError: 'HTTP 500',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    expect(
      (await c.get(`/projections/${projectionId}/webhook/deliveries?status=delivered&limit=3`)).body.deliveries.map((d: any) => d.sequence),
    ).toEqual([1, 3, 4]);
    expect((await c.get(`/projections/${projectionId}/webhook/deliveries?status=lost`)).body.error).toBe('VALIDATION_FAILED');
    expect((await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, { sequence: 0 })).body.error).toBe('VALIDATION_FAILED');

    receiver.failFirst.clear();
    const replay = await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, { sequence: 2 });
    expect(replay).toEqual({ status: 200, body: { projectionId, replayed: 1 } });
    await until(
      () => receiver.accepted.length,
      (n) => n >= 10,
    );
    expect(receiver.accepted[9].sequence).toBe(2);
    expect((await c.get(`/projections/${projectionId}/webhook/deliveries?status=dead`)).body.deliveries).toEqual([]);
    expect((await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, {})).body.replayed).toBe(0);
  });
});

describe('notification guards (SQLite, private webhook URLs not allowed, small retention)', () => {
  let svc: RunningService;
  let c: Client;
  beforeAll(async () => {
    // Both bounds must be passed for a row to go (the newest 5 always stay): an age of 0 lets the count decide.
    svc = await startService({
      LANE_SWEEP_MS: '200',
      NOTIFICATIONS_KEEP_COUNT: '5',
      NOTIFICATIONS_KEEP_MS: '0',
      NOTIFICATIONS_RETENTION_SWEEP_MS: '100',
    });
    c = await newTenant(svc.url, 'guards');
  });
  afterAll(() => svc?.close());

  it.each([
    ['http://127.0.0.1:9/hook', 'WEBHOOK_URL_REFUSED'],
    ['http://localhost:8080/x', 'WEBHOOK_URL_REFUSED'],
    ['http://169.254.169.254/latest/meta-data', 'WEBHOOK_URL_REFUSED'],
    ['http://[::1]/x', 'WEBHOOK_URL_REFUSED'],
    ['http://10.1.2.3/', 'WEBHOOK_URL_REFUSED'],
    ['http://0x7f.1/', 'WEBHOOK_URL_REFUSED'],
    ['ftp://example.com/', 'VALIDATION_FAILED'], // not http(s): refused by the config's own check
  ])('refuses webhook URL %s with %s', async (url, code) => {
    const r = await uploadProjection(c, svc.url, { config: JSON.stringify({ webhook: { url } }) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe(code);
  });

  it('refuses a host name that resolves to a private address (after DNS)', async () => {
    // A name no rule refuses by itself: the machine's own, which /etc/hosts maps to loopback or a private address.
    const name = os.hostname();
    const addresses = (await dns.promises.lookup(name, { all: true })).map((a) => a.address);
    if (addresses.some((a) => isPublicAddress(a)))
      throw new Error(`${name} resolves to a public address here (${addresses}); pick another name for this test`);
    const r = await uploadProjection(c, svc.url, { config: JSON.stringify({ webhook: { url: `http://${name}:8080/hook` } }) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'WEBHOOK_URL_REFUSED', message: expect.stringContaining('resolves to') });
  });

  it('answers a cursor older than retention with CURSOR_EXPIRED and the oldest sequence kept', async () => {
    const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ name: 'kept-totals' }) });
    const projectionId = await deployed(c, up.body.uploadId);
    await placeOrders(c, 0, 12, 3);
    await until(
      async () => (await c.get(`/projections/${projectionId}/notifications?afterSequence=11`)).body.notifications?.length,
      (n) => n === 1,
    );
    // Retention runs every 100 ms: wait for the sweep after the last change (an earlier one kept more).
    const r = await until(
      () => c.get(`/projections/${projectionId}/notifications?afterSequence=0`),
      (x) => x.status === 410 && x.body.oldestSequence === 8,
    );
    expect(r.body).toMatchObject({ error: 'CURSOR_EXPIRED', oldestSequence: 8, afterSequence: 0 });
    const kept = await c.get(`/projections/${projectionId}/notifications?afterSequence=7`);
    expect(kept.body.notifications.map((n: any) => n.sequence)).toEqual(range(8, 12));
    const ws = await WsCollector.open(svc.url, projectionId, c.key, 2);
    await until(
      () => ws.closeCode,
      (code) => code !== null,
    );
    expect(ws.closeCode).toBe(4010);
    expect(JSON.parse(ws.closeReason)).toEqual({ code: 'CURSOR_EXPIRED', oldestSequence: 8 });
  });
});

describe('two instances on PostgreSQL + Redis, and a restart mid-delivery', () => {
  const procs: ServiceProcess[] = [];
  let receiver: WebhookReceiver;
  afterAll(async () => {
    for (const p of procs) if (p.child) await p.kill('SIGKILL');
    await receiver?.stop();
  });

  it('streams every change to clients of both instances, and delivers every webhook after both die with deliveries pending', async () => {
    receiver = await new WebhookReceiver().start();
    const env = {
      ...(await envFor('postgres')),
      ...(await schedulerEnv('bullmq')),
      WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_BACKOFF_MS: '100,200,400,800,1600,3200',
      WEBHOOK_POLL_MS: '100',
      LANE_SWEEP_MS: '200',
    };
    const a = new ServiceProcess(env);
    const b = new ServiceProcess(env);
    procs.push(a, b);
    await Promise.all([a.start(), b.start()]);
    const c = await newTenant(a.url, 'two-instances');
    const cb = clientFor(b.url, c.key);
    const up = await uploadProjection(c, a.url, { config: JSON.stringify({ name: 'shared-feed', webhook: { url: receiver.url } }) });
    receiver.secrets = [up.body.notifications.webhook.secret];
    const projectionId = await deployed(cb, up.body.uploadId);

    const onA = await WsCollector.open(a.url, projectionId, c.key, 0);
    const onB = await WsCollector.open(b.url, projectionId, c.key, 0);
    await placeOrders(c, 0, 50, 9);
    await placeOrders(cb, 50, 50, 9);
    for (const ws of [onA, onB]) {
      await until(
        () => ws.messages.length,
        (n) => n >= 100,
      );
      expect(ws.sequences()).toEqual(range(1, 100));
    }
    await until(
      () => new Set(receiver.sequences()).size,
      (n) => n >= 100,
    );

    // The receiver goes down; both instances are killed with deliveries pending.
    receiver.down = true;
    await placeOrders(c, 100, 20, 9);
    await until(
      () => [...receiver.attempts.keys()].filter((s) => s > 100).length,
      (n) => n >= 1,
    );
    await Promise.all([a.kill('SIGKILL'), b.kill('SIGKILL')]);
    receiver.down = false;

    const again = new ServiceProcess(env);
    procs.push(again);
    await again.start();
    const ca = clientFor(again.url, c.key);
    try {
      await until(
        () => new Set(receiver.sequences()).size,
        (n) => n >= 120,
        60_000,
      );
    } catch (e) {
      // What the store says about the missing ones makes a failure here readable.
      const [pending, dead, log] = await Promise.all([
        ca.get(`/projections/${projectionId}/webhook/deliveries?status=pending`),
        ca.get(`/projections/${projectionId}/webhook/deliveries?status=dead`),
        ca.get(`/projections/${projectionId}/notifications?afterSequence=100`),
      ]);
      const got = new Set(receiver.sequences());
      throw new Error(
        `${(e as Error).message}; missing ${JSON.stringify(range(1, 120).filter((x) => !got.has(x)))}; pending ${JSON.stringify(pending.body)}; dead ${JSON.stringify(dead.body)}; ` +
          `log after 100: ${log.body.notifications?.length}; attempts ${JSON.stringify([...receiver.attempts].filter(([k]) => !got.has(k)))}\n${again.output.slice(-3000)}`,
        { cause: e },
      );
    }
    expect([...new Set(receiver.sequences())].sort((x, y) => x - y)).toEqual(range(1, 120));
    expect(receiver.rejectedSignatures).toBe(0);
    const polled = await clientFor(again.url, c.key).get(`/projections/${projectionId}/notifications?afterSequence=0&limit=1000`);
    expect(polled.body.notifications.map((n: any) => n.sequence)).toEqual(range(1, 120));
  });
});

describe('shutdown with streams open', () => {
  let svc: ServiceProcess | undefined;
  afterAll(async () => {
    if (svc?.child) await svc.kill('SIGKILL');
  });

  it('ends WebSocket and SSE streams on SIGTERM and exits promptly (streams do not hold the drain)', async () => {
    svc = new ServiceProcess({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'es-notify-stop-')), SHUTDOWN_GRACE_MS: '20000' });
    await svc.start();
    const c = await newTenant(svc.url, 'stopping');
    const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ sse: true }) });
    const projectionId = await deployed(c, up.body.uploadId);
    const ws = await WsCollector.open(svc.url, projectionId, c.key, 0);
    const sse = await SseCollector.open(svc.url, projectionId, c.key);
    await placeOrders(c, 0, 3, 2);
    await until(
      () => ws.messages.length + sse.sequences().length,
      (n) => n >= 6,
    );
    const t0 = Date.now();
    expect(await svc.kill('SIGTERM')).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until(
      () => ws.closeCode,
      (code) => code !== null,
    );
    expect(ws.closeCode).toBe(1001);
    sse.close();
  });
});
