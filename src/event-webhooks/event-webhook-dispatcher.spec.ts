import { StoredEvent } from '../store/event-log.port';
import { WebhookSecrets } from '../notifications/webhooks/webhook-secrets';
import { SendResult, WebhookSender } from '../notifications/webhooks/webhook-sender';
import { EventWebhookClaims } from '../store/event-webhook-claims.port';
import { EventWebhookClaim, EventWebhookRecord } from '../store/event-webhook-records';
import { EventDeliveryTick } from './event-delivery-tick';
import { EventWebhookDispatcher } from './event-webhook-dispatcher';
import { eventMessage, eventMessageId, EventWebhookDispatcherOptions, EventWebhookRound, IDLE_HOLD_MS } from './event-webhook-round';
import { elapse, until } from '../../test/support/wait';

const event = (position: number, over: Partial<StoredEvent> = {}): StoredEvent => ({
  position,
  eventId: `e${position}`,
  aggregateId: 'order-1',
  aggregateType: 'order',
  eventType: 'Placed',
  version: position,
  timestamp: 1_700_000_000_000,
  data: '{"n":1}',
  metadata: null,
  correlationId: null,
  causationId: null,
  ...over,
});

const record = (over: Partial<EventWebhookRecord> = {}): EventWebhookRecord => ({
  tenantId: 't',
  webhookId: 'w',
  name: null,
  url: 'https://receiver.example/hook',
  aggregateTypes: null,
  eventTypes: null,
  query: null,
  status: 'active',
  deliveredPosition: 0,
  attempts: 0,
  nextAttemptAt: 0,
  lastError: null,
  lastErrorAt: null,
  consecutiveDead: 0,
  suspendedAt: null,
  suspendedReason: null,
  createdAt: 0,
  claimOwner: null,
  claimUntil: null,
  ...over,
});

/** A store of one subscription over a fixed log: only what the dispatcher's logic needs, with its calls recorded. */
class FakeRepo {
  calls: string[] = [];
  /** Advances refused from this position on (another run or a replay moved the cursor). */
  fenceLostAt = Infinity;
  constructor(
    public w: EventWebhookRecord,
    public log: StoredEvent[],
  ) {}
  async anyActive() {
    return true;
  }
  async due(_now = 0, owner = '') {
    return (this.w.claimOwner === null || this.w.claimOwner === owner) && this.log.some((e) => e.position > this.w.deliveredPosition)
      ? [{ tenantId: 't', webhookId: 'w' }]
      : [];
  }
  async claim(_t: string, _w: string, owner: string, _now: number, until: number) {
    if (this.w.claimOwner !== null && this.w.claimOwner !== owner) return null;
    this.w = { ...this.w, claimOwner: owner, claimUntil: until };
    this.calls.push('claim');
    return this.w;
  }
  async eventsAfter(w: EventWebhookRecord, after: number, limit: number, window: number) {
    const inWindow = this.log.filter((e) => e.position > after && e.position <= after + window);
    const extent = inWindow.length ? inWindow[inWindow.length - 1].position : after;
    const types = w.eventTypes;
    return { events: inWindow.filter((e) => !types || types.includes(e.eventType)).slice(0, limit), extent };
  }
  async advance(c: EventWebhookClaim, position: number, until: number) {
    if (position >= this.fenceLostAt || c.deliveredPosition !== this.w.deliveredPosition) return false;
    this.w = { ...this.w, deliveredPosition: position, attempts: 0, claimUntil: until };
    this.calls.push(`advance ${position}`);
    return true;
  }
  async get() {
    return this.w;
  }
  async renew() {
    return true;
  }
  async release() {
    this.w = { ...this.w, claimOwner: null };
    this.calls.push('release');
  }
  async attemptFailed(_c: EventWebhookClaim, attempts: number, error: string, next: number) {
    this.w = { ...this.w, attempts, nextAttemptAt: next, lastError: error, claimOwner: null };
    this.calls.push(`failed ${attempts} ${error}`);
    return true;
  }
  async deadLettered(_c: EventWebhookClaim, e: { position: number }, attempts: number) {
    this.w = { ...this.w, deliveredPosition: e.position, attempts: 0, claimOwner: null };
    this.calls.push(`dead ${e.position} after ${attempts}`);
    return true;
  }
}

function dispatcherOver(repo: FakeRepo, answer: (position: number) => boolean, slots = true) {
  const sent: { url: string; headers: Record<string, string>; body: string }[] = [];
  const options: EventWebhookDispatcherOptions = {
    backoffMs: [10, 20],
    timeoutMs: 1_000,
    pollMs: 60_000,
    concurrency: 4,
    suspendAfterDead: 3,
  };
  const round = new EventWebhookRound(
    repo as unknown as EventWebhookClaims,
    { generation: 0, signing: async () => ['whsec_' + Buffer.alloc(32, 1).toString('base64')] } as unknown as WebhookSecrets,
    {
      send: async (url: string, headers: Record<string, string>, body: string): Promise<SendResult> => {
        sent.push({ url, headers, body });
        return answer(Number(headers['webhook-position'])) ? { ok: true, status: 204 } : { ok: false, error: 'HTTP 500' };
      },
    } as unknown as WebhookSender,
    options,
    { acquireWebhookSlot: async () => (slots ? () => undefined : null), pendingDeliveries: async () => 0 },
  );
  const d = new EventWebhookDispatcher(new EventDeliveryTick(round, options), round);
  return { d, sent };
}

/** Runs ticks until the subscription is let go with nothing more to do now. */
async function settle(d: EventWebhookDispatcher, repo: FakeRepo): Promise<void> {
  for (let i = 0; i < 50; i++) {
    d.wake();
    await elapse(5, 'poll interval: each look wakes the dispatcher first');
    if ((await repo.due(0, d.owner)).length === 0) break;
  }
  await d.close();
}

describe('EventWebhookDispatcher', () => {
  it('delivers in position order, moving the cursor after each 2xx, and lets the claim go once idle', async () => {
    const repo = new FakeRepo(record(), [event(1), event(2), event(3)]);
    const { d, sent } = dispatcherOver(repo, () => true);
    await settle(d, repo);
    expect(sent.map((s) => s.headers['webhook-position'])).toEqual(['1', '2', '3']);
    expect(sent.map((s) => s.headers['webhook-id'])).toEqual(['msg_w_1', 'msg_w_2', 'msg_w_3']);
    expect(sent[0].headers['webhook-signature']).toMatch(/^v1,/);
    expect(repo.calls).toEqual(['claim', 'advance 1', 'advance 2', 'advance 3', 'release']);
  });

  it('delivers the next events under the claim it kept, without claiming again', async () => {
    const repo = new FakeRepo(record(), [event(1)]);
    const { d, sent } = dispatcherOver(repo, () => true);
    d.wake();
    await until(
      () => repo.w.deliveredPosition,
      (p) => p >= 1,
      5_000,
      'position 1 delivered',
    );
    repo.log.push(event(2));
    d.wake();
    await until(
      () => repo.w.deliveredPosition,
      (p) => p >= 2,
      5_000,
      'position 2 delivered',
    );
    await d.close();
    expect(sent.map((s) => s.headers['webhook-position'])).toEqual(['1', '2']);
    expect(repo.calls).toEqual(['claim', 'advance 1', 'advance 2', 'release']);
  });

  it('lets an idle claim go after IDLE_HOLD_MS, so another instance can take the subscription', async () => {
    const repo = new FakeRepo(record(), [event(1)]);
    const { d } = dispatcherOver(repo, () => true);
    d.wake();
    await until(
      () => repo.w.deliveredPosition,
      (p) => p >= 1,
      5_000,
      'position 1 delivered',
    );
    expect(repo.w.claimOwner).toBe(d.owner);
    await until(
      () => repo.w.claimOwner,
      (o) => o === null,
      5_000,
      'the claim released',
    );
    expect(repo.calls).toEqual(['claim', 'advance 1', 'release']);
    await d.close();
    expect(repo.calls).toHaveLength(3);
    expect(IDLE_HOLD_MS).toBeLessThan(1_000);
  });

  it('passes over a window of filtered-out events by moving the cursor to its extent', async () => {
    const log = [event(1, { eventType: 'Other' }), event(2, { eventType: 'Other' }), event(3)];
    const repo = new FakeRepo(record({ eventTypes: ['Placed'] }), log);
    const { d, sent } = dispatcherOver(repo, () => true);
    await settle(d, repo);
    expect(sent.map((s) => s.headers['webhook-position'])).toEqual(['3']);
    expect(repo.w.deliveredPosition).toBe(3);
  });

  it('records a failed attempt with the next one due on the schedule, and dead-letters once the schedule is spent', async () => {
    const repo = new FakeRepo(record(), [event(1), event(2)]);
    const { d } = dispatcherOver(repo, (p) => p !== 1);
    await settle(d, repo);
    expect(repo.calls.slice(0, 2)).toEqual(['claim', 'failed 1 HTTP 500']);
    expect(repo.w.nextAttemptAt).toBeGreaterThan(Date.now() - 1_000);
    // The retries as the store makes them due again (the fake ignores time): attempts 2 and 3, then dead.
    const again = dispatcherOver(repo, (p) => p !== 1);
    await settle(again.d, repo);
    const third = dispatcherOver(repo, (p) => p !== 1);
    await settle(third.d, repo);
    expect(repo.calls).toContain('failed 2 HTTP 500');
    expect(repo.calls).toContain('dead 1 after 3');
    expect(repo.calls[repo.calls.length - 2]).toBe('advance 2');
  });

  it('stops at once when a write is fenced off (a replay, a delete or another instance)', async () => {
    const repo = new FakeRepo(record(), [event(1), event(2), event(3)]);
    repo.fenceLostAt = 2;
    const { d, sent } = dispatcherOver(repo, () => true);
    d.wake();
    await until(
      () => sent.length,
      (n) => n >= 2,
      5_000,
      'two sends',
    );
    await elapse(20, 'time for a third send, had the fence not stopped the dispatcher');
    await d.close();
    expect(sent.map((s) => s.headers['webhook-position'])).toEqual(['1', '2']);
    expect(repo.calls).toEqual(['claim', 'advance 1']);
  });

  it("sends nothing while the tenant's webhooksInFlight quota is taken, and lets the claim go", async () => {
    const repo = new FakeRepo(record(), [event(1)]);
    const { d, sent } = dispatcherOver(repo, () => true, false);
    d.wake();
    await elapse(20, 'the window in which a send would go out, were the quota free');
    await d.close();
    expect(sent).toEqual([]);
    expect(repo.calls).toEqual(['claim', 'release']);
    expect(repo.w.attempts).toBe(0);
  });

  it('writes the event as the log read shows it, its payload text verbatim, behind type "event"', () => {
    const text = eventMessage(event(7, { data: '{"b":1,  "a":"é"}', metadata: '{"m":true}', correlationId: 'c-1' }));
    expect(text.startsWith('{"type":"event","eventId":"e7"')).toBe(true);
    expect(text).toContain('"data":{"b":1,  "a":"é"}');
    expect(JSON.parse(text)).toMatchObject({
      type: 'event',
      position: 7,
      aggregateType: 'order',
      metadata: { m: true },
      correlationId: 'c-1',
    });
    expect(eventMessageId('w1', 7)).toBe('msg_w1_7');
  });
});
