import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { toStoredSettings } from '../../src/notifications/log/notification-settings';
import { SecretCipher } from '../../src/notifications/webhooks/secret-cipher';
import { assembleWebhookDispatcher } from '../../src/notifications/webhooks/assemble-webhook-dispatcher';
import { WebhookSecrets } from '../../src/notifications/webhooks/webhook-secrets';
import { WebhookSender } from '../../src/notifications/webhooks/webhook-sender';
import { WebhookUrlGuard } from '../../src/notifications/webhooks/webhook-url-guard';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { elapse } from '../support/wait';

jest.setTimeout(120_000);

let pg: ThrowawayPostgres | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await pg?.stop();
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
}, 60_000);

async function openStore(kind: 'sqlite' | 'postgres'): Promise<Store> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-turns-'));
    dirs.push(dir);
    const s = new SqliteStore({ file: path.join(dir, 'events.sqlite') });
    await s.migrate();
    return s;
  }
  pg ??= await ThrowawayPostgres.start();
  const s = new PostgresStore({ connectionString: await pg.createDatabase() });
  await s.migrate();
  return s;
}

/** A receiver per tenant path: `/slow` answers after `slowMs`, anything else at once; records when each delivery arrived. */
class Receivers {
  readonly arrived: { path: string; at: number }[] = [];
  private server!: http.Server;
  port = 0;
  constructor(private readonly slowMs: number) {}
  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const answer = () => {
          this.arrived.push({ path: req.url!, at: Date.now() });
          res.writeHead(204).end();
        };
        if (req.url === '/slow') setTimeout(answer, this.slowMs);
        else answer();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  count(p: string): number {
    return this.arrived.filter((a) => a.path === p).length;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** `keys` state changes of tenant's projection p1 (one per key, so none waits on another), logged as notifications. */
async function stateChanges(store: Store, tenantId: string, webhookUrl: string, keys: number, from = 0): Promise<void> {
  if (from === 0) {
    await store.tenants.createTenant({ tenantId, name: tenantId, createdAt: 1 });
    const version = { versionId: 'v1', projectionId: 'p1', tenantId, className: 'C', targetPosition: 0, createdAt: 1 };
    await store.projections.deploy({
      tenantId,
      projectionId: 'p1',
      name: 'n',
      version,
      ...toStoredSettings({ webhookUrl, isolated: false, sse: false }),
    });
  }
  const ids = Array.from({ length: keys }, (_, i) => from + i);
  await store.events.appendMany(
    ids.map((i) => ({ tenantId, aggregateId: `order-${i}`, inferredType: 'order', events: [{ eventType: 'Placed', data: '{}' }] })),
  );
  await store.lanes.inbox.route(
    { tenantId, versionId: 'v1' },
    ids.map((i) => ({ key: `k${i}`, position: i + 1 })),
    from + keys,
  );
  for (let c = 0; c < ids.length; c += 200) {
    await Promise.all(
      ids.slice(c, c + 200).map(async (i) => {
        await store.lanes.runs.laneWork({ tenantId, versionId: 'v1', key: `k${i}` }, 1);
        const change = {
          position: i + 1,
          aggregateId: `order-${i}`,
          aggregateType: 'order',
          version: 1,
          timestamp: 1,
          state: `{"i":${i}}`,
        };
        await store.lanes.runs.applied(
          { tenantId, versionId: 'v1', key: `k${i}` },
          {
            state: change.state,
            fromPosition: 0,
            appliedPosition: i + 1,
            updatedAt: 1,
            notify: { projectionId: 'p1', changes: [change] },
          },
        );
      }),
    );
  }
}

const until = async (what: string, ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await elapse(5, 'poll interval');
  }
};

describe.each(['sqlite', 'postgres'] as const)('webhook dispatcher turns on %s', (kind) => {
  it('delivers a tenant’s single webhook in its turn while another tenant has 2,000 waiting on a slow receiver', async () => {
    const slowMs = 300;
    const concurrency = 8;
    const store = await openStore(kind);
    const receivers = await new Receivers(slowMs).start();
    const base = `http://127.0.0.1:${receivers.port}`;
    const secrets = new WebhookSecrets(store.webhooks, new SecretCipher(randomBytes(32)), 0);
    const dispatcher = assembleWebhookDispatcher({
      webhooks: store.webhooks,
      notifications: store.notifications,
      projections: store.projections,
      secrets,
      sender: new WebhookSender(new WebhookUrlGuard({ allowPrivate: true }), 5_000),
      options: {
        backoffMs: [1000],
        timeoutMs: 5_000,
        pollMs: 60_000, // only wake-ups in this test: the poll is not what serves the second tenant
        concurrency,
      },
    });
    try {
      const backlog = 2_000;
      await stateChanges(store, 'busy', `${base}/slow`, backlog);
      await stateChanges(store, 'calm', `${base}/calm`, 1);
      await store.webhooks.startDeliveriesNow('calm', 'p1'); // calm's first change predates this test's clock: not delivered
      dispatcher.start(); // its first tick finds every backlog
      await until('the busy tenant to be delivering', () => receivers.count('/slow') >= 3 * concurrency, 30_000);

      await stateChanges(store, 'calm', `${base}/calm`, 1, 1);
      const changedAt = Date.now();
      dispatcher.notified('calm', 'p1');
      await until('the calm tenant’s delivery', () => receivers.count('/calm') === 1, 30_000);
      const latency = receivers.arrived.find((a) => a.path === '/calm')!.at - changedAt;
      const busyLeft = backlog - receivers.count('/slow');
      const busyLeftMs = (busyLeft / concurrency) * slowMs;
      console.log(
        `${kind}: the calm tenant's webhook arrived ${latency} ms after its change; the busy tenant had ${busyLeft} deliveries (~${Math.round(busyLeftMs / 1000)} s) left`,
      );
      // A turn, not the queue: at most a slot's wait (one slow attempt), far below the backlog's time.
      expect(latency).toBeLessThan(3 * slowMs + 1000);
      expect(latency).toBeLessThan(busyLeftMs / 20);
      expect(busyLeft).toBeGreaterThan(backlog / 2);
    } finally {
      await dispatcher.close();
      await elapse(slowMs + 200, 'attempts in flight (slowMs each) finish before the store closes');
      await receivers.stop();
      await store.close();
    }
  });
});
