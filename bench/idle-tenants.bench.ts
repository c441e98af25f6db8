/**
 * What idle tenants cost: N tenants, each with a caught-up projection that has a webhook and a
 * notification log, and nothing happening. The lane engine (sweep), the webhook dispatcher (poll)
 * and retention run with their production intervals; the bench counts the store calls they make
 * and the CPU this process spends (SQLite runs in-process, so its work is included).
 *
 *   npm run build && node dist/bench/idle-tenants.bench.js            # IDLE_TENANTS=0,1000,5000
 *   DATABASE_URL=postgres://… node dist/bench/idle-tenants.bench.js   # statements only (PostgreSQL's CPU is elsewhere)
 *
 * Uses only APIs that predate issue 12, so the same file measures a baseline checkout.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InProcessLaneScheduler } from '../src/lanes/in-process-lane-scheduler';
import { laneMachinery } from '../test/support/lane-machinery';
import { NotificationRetention } from '../src/notifications/log/notification-retention';
import { SecretCipher } from '../src/notifications/webhooks/secret-cipher';
import { assembleWebhookDispatcher } from '../src/notifications/webhooks/assemble-webhook-dispatcher';
import { WebhookSecrets } from '../src/notifications/webhooks/webhook-secrets';
import { WebhookSender } from '../src/notifications/webhooks/webhook-sender';
import { WebhookUrlGuard } from '../src/notifications/webhooks/webhook-url-guard';
import { PostgresStore } from '../src/store/postgres/postgres-store';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { Store } from '../src/store/store.port';

const COUNTS = (process.env.IDLE_TENANTS ?? '0,1000,5000').split(',').map(Number);
const SECONDS = Number(process.env.IDLE_SECONDS ?? 10);

/** Wraps a repository so that every method call is counted (and timed, wall clock) under `name.method`. */
function counted<T extends object>(name: string, target: T, calls: Map<string, number>, ms: Map<string, number>): T {
  return new Proxy(target, {
    get(t, p, r) {
      const v = Reflect.get(t, p, r);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const k = `${name}.${String(p)}`;
        calls.set(k, (calls.get(k) ?? 0) + 1);
        const started = performance.now();
        const result = v.apply(t, args);
        if (result instanceof Promise)
          void result.finally(() => ms.set(k, (ms.get(k) ?? 0) + performance.now() - started)).catch(() => undefined);
        return result;
      };
    },
  });
}

async function openStore(): Promise<{ store: Store; cleanup: () => void }> {
  if (process.env.DATABASE_URL) {
    const store = new PostgresStore({ connectionString: process.env.DATABASE_URL });
    await store.migrate();
    return { store, cleanup: () => undefined };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-idle-'));
  const store = new SqliteStore({ file: path.join(dir, 'events.sqlite') });
  await store.migrate();
  return { store, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A tenant with one event, a projection caught up on it, one notification, its webhook cursor at the head. */
async function idleTenant(store: Store, run: string, i: number): Promise<void> {
  const tenantId = `${run}-t${i}`;
  await store.tenants.createTenant({ tenantId, name: tenantId, createdAt: 1 });
  await store.events.appendMany([
    { tenantId, aggregateId: 'order-1', inferredType: 'order', events: [{ eventType: 'Placed', data: '{}' }] },
  ]);
  const version = { tenantId, versionId: `${tenantId}-v`, projectionId: `${tenantId}-p`, className: 'C', targetPosition: 1, createdAt: 1 };
  const notifyConfig = JSON.stringify({ webhookUrl: 'https://receiver.example/hook', isolated: false, sse: false });
  await store.projections.deploy({ tenantId, projectionId: version.projectionId, name: 'p', version, notifyConfig });
  await store.lanes.inbox.route({ tenantId, versionId: version.versionId }, [{ key: 'k', position: 1 }], 1);
  await store.lanes.runs.laneWork({ tenantId, versionId: version.versionId, key: 'k' }, 10);
  const change = { position: 1, aggregateId: 'order-1', aggregateType: 'order', version: 1, timestamp: 1, state: '{}' };
  await store.lanes.runs.applied(
    { tenantId, versionId: version.versionId, key: 'k' },
    {
      state: '{}',
      fromPosition: 0,
      appliedPosition: 1,
      updatedAt: 1,
      notify: { projectionId: version.projectionId, changes: [{ ...change, position: 2 }] },
    },
  );
  await store.projections.markCaughtUp(tenantId, version.versionId, 1);
  await store.webhooks.startDeliveriesNow(tenantId, version.projectionId);
}

async function measure(n: number): Promise<string> {
  const { store, cleanup } = await openStore();
  const run = randomBytes(3).toString('hex');
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => idleTenant(store, run, i + j)));
  const calls = new Map<string, number>();
  const ms = new Map<string, number>();
  const projections = counted('projections', store.projections, calls, ms);
  const lanes = counted('lanes', store.lanes, calls, ms);
  const events = counted('events', store.events, calls, ms);
  const webhooks = counted('webhooks', store.webhooks, calls, ms);
  const notifications = counted('notifications', store.notifications, calls, ms);
  const runtime = {
    resolveKeys: async () => Promise.reject(new Error('an idle tenant called the runtime')),
    apply: async () => Promise.reject(new Error('an idle tenant called the runtime')),
    unload: async () => undefined,
  };
  const { engine } = laneMachinery({
    log: events,
    catalog: projections,
    lanes,
    runtime,
    scheduler: (handler) => new InProcessLaneScheduler(handler, { concurrency: 32 }),
  });
  const secrets = new WebhookSecrets(webhooks, new SecretCipher(randomBytes(32)), 0);
  const sender = new WebhookSender(new WebhookUrlGuard({ allowPrivate: false }), 10_000);
  const dispatcher = assembleWebhookDispatcher({
    webhooks,
    notifications,
    projections,
    secrets,
    sender,
    options: { backoffMs: [1000], timeoutMs: 10_000, pollMs: 1000, concurrency: 64 },
  });
  const retention = new NotificationRetention(notifications, webhooks, {
    keepCount: 100_000,
    keepMs: 7 * 86_400_000,
    sweepMs: 60_000,
    deadKeepMs: 86_400_000,
  });
  await engine.start();
  dispatcher.start();
  await new Promise((r) => setTimeout(r, 3000)); // start-up (every router's first look) is not idle cost
  calls.clear();
  ms.clear();
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const retentionCalls0 = [...calls.values()].reduce((a, b) => a + b, 0);
  const rCpu0 = process.cpuUsage();
  await retention.sweep(); // runs once a minute in production: measured once, apart
  const retentionCpuMs = (process.cpuUsage(rCpu0).user + process.cpuUsage(rCpu0).system) / 1000;
  const retentionCalls = [...calls.values()].reduce((a, b) => a + b, 0) - retentionCalls0;
  const elapsed = (Date.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await dispatcher.close();
  await engine.close();
  await store.close();
  cleanup();
  const perSecond = (retentionCalls0 / SECONDS).toFixed(1);
  const top = [...calls]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, v]) => `${k} ${v}× ${((ms.get(k) ?? 0) / v).toFixed(1)} ms`)
    .join(', ');
  const cpuPerS = ((cpu.user + cpu.system) / 1000 / elapsed - retentionCpuMs / elapsed).toFixed(1);
  return `${String(n).padStart(6)} idle tenants: ${perSecond} store calls/s from sweep + webhook poll, ${cpuPerS} ms CPU/s; one retention sweep: ${retentionCalls} calls, ${retentionCpuMs.toFixed(0)} ms CPU  [${top}]`;
}

async function main(): Promise<void> {
  console.log(
    `# idle tenants — ${new Date().toISOString()}, ${os.cpus().length} cores, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, ${SECONDS} s each`,
  );
  for (const n of COUNTS) console.log(await measure(n));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
