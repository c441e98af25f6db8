import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { NO_METRICS } from '../../observability/metrics/app-metrics';
import { InMemoryNotificationLog } from '../../store/memory/in-memory-notification-log';
import { InMemoryWebhookRepository } from '../../store/memory/in-memory-webhook-repository';
import { NotificationRepository } from '../../store/notification-repository.port';
import { ProjectionCatalogRepository } from '../../store/projection-catalog.port';
import { TENANT_SCOPE, WebhookDelivery } from '../../store/webhook-records';
import { WebhookRepository } from '../../store/webhook-repository';
import { toStoredSettings } from '../log/notification-settings';
import { assembleWebhookDispatcher } from './assemble-webhook-dispatcher';
import { SecretCipher } from './secret-cipher';
import { TenantWebhookQuota } from './tenant-webhook-quota.port';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';
import { WebhookSecrets } from './webhook-secrets';
import { SendResult, WebhookSender } from './webhook-sender';
import { WebhookSigner } from './webhook-signer';
import { elapse } from '../../../test/support/wait';

/** The projection webhooks' store in memory: the in-memory adapter of every webhook role over its notification log. */
class MemoryStore {
  readonly log = new InMemoryNotificationLog();
  readonly webhooks = new InMemoryWebhookRepository(this.log);

  addProjection(tenantId: string, projectionId: string, url: string): void {
    this.log.configure(tenantId, projectionId, toStoredSettings({ webhookUrl: url, isolated: false, sse: false }));
  }

  /** A state change of `stateKey` logged: the next sequence of the projection. */
  logChange(tenantId: string, projectionId: string, stateKey: string): number {
    return this.log.log(tenantId, projectionId, stateKey);
  }

  /** The projection's deliveries as stored (every status). */
  rows(tenantId = 't1', projectionId = 'p1'): Promise<WebhookDelivery[]> {
    return this.webhooks.list(tenantId, projectionId, { afterSequence: 0, limit: 10_000 });
  }

  async row(tenantId: string, sequence: number): Promise<WebhookDelivery | undefined> {
    return (await this.rows(tenantId)).find((r) => r.sequence === sequence);
  }
}

interface Sent {
  tenantId: string;
  sequence: number;
  stateKey: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** A receiver per tenant (`https://<tenant>.example/hook`): records each attempt and answers with `answer` (by default at once, 204). */
class FakeSender {
  readonly sent: Sent[] = [];
  answer: (s: Sent) => Promise<SendResult> = async () => ({ ok: true, status: 204 });
  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const { stateKey } = JSON.parse(body) as { stateKey: string };
    const s = {
      tenantId: new URL(url).hostname.split('.')[0],
      sequence: Number(headers['webhook-sequence']),
      stateKey,
      headers,
      body,
      at: Date.now(),
    };
    this.sent.push(s);
    return this.answer(s);
  }
  of(tenantId: string, sequence: number): Sent[] {
    return this.sent.filter((s) => s.tenantId === tenantId && s.sequence === sequence);
  }
}

function deferred(): { promise: Promise<SendResult>; resolve: (r: SendResult) => void } {
  let resolve!: (r: SendResult) => void;
  return { promise: new Promise<SendResult>((r) => (resolve = r)), resolve };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await elapse(2, 'poll interval');
  }
}

describe('WebhookDispatcher', () => {
  let store: MemoryStore;
  let sender: FakeSender;
  let secrets: WebhookSecrets;
  let dispatcher: WebhookDispatcher | undefined;

  beforeEach(() => {
    store = new MemoryStore();
    sender = new FakeSender();
    secrets = new WebhookSecrets(store.webhooks, new SecretCipher(randomBytes(32)), 60_000);
  });
  afterEach(async () => {
    await dispatcher?.close();
    dispatcher = undefined;
  });

  function start(options: Partial<WebhookDispatcherOptions> = {}, quota?: TenantWebhookQuota): WebhookDispatcher {
    dispatcher = assembleWebhookDispatcher({
      webhooks: store.webhooks,
      notifications: store.log,
      projections: store.log,
      secrets,
      sender,
      options: { backoffMs: [1_000], timeoutMs: 1_000, pollMs: 10, concurrency: 8, ...options },
      quota,
    });
    dispatcher.start();
    return dispatcher;
  }

  function projection(tenantId: string, keys: string[]): void {
    store.addProjection(tenantId, 'p1', `https://${tenantId}.example/hook`);
    for (const k of keys) store.logChange(tenantId, 'p1', k);
  }

  it("holds a key's next delivery until its head is delivered, not other keys' deliveries", async () => {
    projection('t1', ['a', 'a', 'b']);
    const head = deferred();
    sender.answer = async (s) => (s.sequence === 1 ? head.promise : { ok: true, status: 204 });
    start();

    await until(() => sender.of('t1', 3).length === 1, "key b's delivery");
    await elapse(50, 'several polls: key a stays held');
    expect(sender.of('t1', 2)).toHaveLength(0);

    head.resolve({ ok: true, status: 204 });
    await until(() => sender.of('t1', 2).length === 1, "key a's second delivery");
    expect(sender.sent.filter((s) => s.stateKey === 'a').map((s) => s.sequence)).toEqual([1, 2]);
    expect((await store.row('t1', 2))?.status).toBe('delivered');
  });

  it("retries a failing head on the backoff schedule, dead-letters it after the last step, and only then sends the key's next", async () => {
    projection('t1', ['a', 'a']);
    sender.answer = async (s) => (s.sequence === 1 ? { ok: false, error: 'HTTP 500' } : { ok: true, status: 204 });
    start({ backoffMs: [40, 80] });

    await until(() => sender.of('t1', 2).length === 1, "key a's second delivery");
    const attempts = sender.of('t1', 1);
    expect(attempts).toHaveLength(3); // the first try and one per backoff step
    // Not before each step's delay (Date.now() has whole milliseconds: 1 ms of slack).
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(39);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(79);
    expect(sender.of('t1', 2)[0].at).toBeGreaterThanOrEqual(attempts[2].at);
    expect(await store.row('t1', 1)).toMatchObject({ status: 'dead', attempts: 3, lastError: 'HTTP 500' });

    await elapse(150, 'time for a fourth attempt, which a dead delivery must not get');
    expect(sender.of('t1', 1)).toHaveLength(3);
  });

  it('sends nothing to a suspended endpoint, however many notifications wait', async () => {
    projection('t1', ['a', 'b', 'c']);
    await store.webhooks.suspend('t1', 'p1', 'PENDING_LIMIT', 0);
    start({}, { acquireWebhookSlot: async () => () => undefined, pendingDeliveries: async () => 10 });

    dispatcher!.notified('t1', 'p1');
    await elapse(80, 'time for a send, which must not happen');
    expect(sender.sent).toHaveLength(0);
    expect(await store.rows()).toHaveLength(0);
  });

  it('suspends an endpoint at its pendingDeliveries limit whose receiver is failing, and sends it nothing more', async () => {
    projection('t1', ['a', 'b', 'c', 'd', 'e']);
    sender.answer = async () => ({ ok: false, error: 'HTTP 503' });
    start({ backoffMs: [20, 20, 20] }, { acquireWebhookSlot: async () => () => undefined, pendingDeliveries: async () => 2 });

    await until(async () => (await store.webhooks.suspension('t1', 'p1')) !== null, 'the suspension');
    expect(await store.webhooks.suspension('t1', 'p1')).toMatchObject({
      resumeSequence: 1,
      reason: expect.stringContaining('PENDING_LIMIT'),
    });
    await elapse(30, 'an attempt claimed before the suspension may still be sent');
    const sent = sender.sent.length;

    store.logChange('t1', 'p1', 'f');
    dispatcher!.notified('t1', 'p1');
    await elapse(100, 'time for a send while suspended, which must not happen');
    expect(sender.sent).toHaveLength(sent);
    expect(new Set(sender.sent.map((s) => s.sequence))).toEqual(new Set([1, 2])); // never past the limit
    expect(await store.rows()).toHaveLength(0);
  });

  it('keeps a busy (not failing) endpoint at its limit waiting, and makes its next deliveries when one ends', async () => {
    projection('t1', ['a', 'b', 'c']);
    const [first, second] = [deferred(), deferred()];
    sender.answer = async (s) => (s.sequence === 1 ? first.promise : s.sequence === 2 ? second.promise : { ok: true, status: 204 });
    // No poll in this test: only the end of a delivery can bring the endpoint its next one.
    start({ pollMs: 60_000 }, { acquireWebhookSlot: async () => () => undefined, pendingDeliveries: async () => 2 });

    await until(() => sender.of('t1', 2).length === 1, 'the second delivery');
    await elapse(50, 'time for a third row, which the limit keeps in the log');
    expect((await store.rows()).map((r) => r.sequence)).toEqual([1, 2]); // 3 waits in the log: the limit is 2

    first.resolve({ ok: true, status: 204 });
    second.resolve({ ok: true, status: 204 });
    await until(() => sender.of('t1', 3).length === 1, 'the third delivery');
    expect(await store.webhooks.suspension('t1', 'p1')).toBeNull();
  });

  it('serves tenants in turn: one delivery each before a tenant with a backlog gets its second', async () => {
    projection('ta', ['k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    projection('tb', ['k1']);
    projection('tc', ['k1']);
    start({ concurrency: 1 });

    await until(() => sender.sent.length === 8, 'every delivery');
    expect(sender.sent.slice(0, 3).map((s) => s.tenantId)).toEqual(['ta', 'tb', 'tc']);
  });

  it('signs the first delivery after a rotation with the new secret, the previous one still overlapping', async () => {
    projection('t1', ['a']);
    start();
    await until(() => sender.sent.length === 1, 'the first delivery');
    const before = await secrets.tenantSecret('t1');
    expect(WebhookSigner.verify(before, sender.sent[0].headers, sender.sent[0].body)).toBe(true);

    const { secret: after } = await secrets.rotate('t1', TENANT_SCOPE);
    store.logChange('t1', 'p1', 'a');
    dispatcher!.notified('t1', 'p1');
    await until(() => sender.sent.length === 2, 'the delivery after the rotation');
    expect(WebhookSigner.verify(after, sender.sent[1].headers, sender.sent[1].body)).toBe(true);
    expect(WebhookSigner.verify(before, sender.sent[1].headers, sender.sent[1].body)).toBe(true);
  });
});

describe('WebhookDispatcher repair sweep', () => {
  it('gives each headless key the store names its head, counting and logging only the repairs the store made', async () => {
    const k = (stateKey: string) => ({ tenantId: 't1', projectionId: 'p1', stateKey, sequence: 7 });
    const repairHead = jest.fn(async (h: { stateKey: string }) => h.stateKey !== 'taken'); // 'taken': another instance was first
    const repo = { headlessKeys: jest.fn(async () => [k('a'), k('taken'), k('b')]), repairHead };
    const repaired = jest.fn();
    const metrics = Object.assign(Object.create(NO_METRICS), { webhookHeadRepaired: repaired });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const d = assembleWebhookDispatcher({
      webhooks: repo as unknown as WebhookRepository,
      notifications: {} as NotificationRepository,
      projections: {} as ProjectionCatalogRepository,
      secrets: {} as WebhookSecrets,
      sender: {} as WebhookSender,
      options: { backoffMs: [1_000], timeoutMs: 1_000, pollMs: 60_000, concurrency: 1 },
      metrics,
    });
    d.wake = () => undefined; // the tick is not what this tests
    try {
      expect(await d.repairHeads()).toBe(2);
      expect(repairHead).toHaveBeenCalledTimes(3);
      expect(repaired).toHaveBeenCalledTimes(2);
      const lines = warn.mock.calls.map((c) => String(c[0]));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toContain('"a"');
      expect(lines[0]).toContain('projection p1, tenant t1');
      // A sweep that fails (the store unreachable) is logged and tried again at the next one.
      repo.headlessKeys.mockRejectedValueOnce(new Error('down'));
      expect(await d.repairHeads()).toBe(0);
      expect(String(warn.mock.calls.at(-1)?.[0])).toContain('webhook head repair failed: down');
    } finally {
      warn.mockRestore();
    }
  });
});
