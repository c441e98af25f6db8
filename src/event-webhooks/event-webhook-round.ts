import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { LruMap } from '../common/lru-map';
import { stringifyJson } from '../common/raw-json';
import { storedEventView } from '../events/event-views';
import { WebhookSecrets } from '../notifications/webhooks/webhook-secrets';
import { TenantWebhookQuota } from '../notifications/webhooks/tenant-webhook-quota.port';
import { SendResult, WebhookSender } from '../notifications/webhooks/webhook-sender';
import { WebhookSigner } from '../notifications/webhooks/webhook-signer';
import { StoredEvent } from '../store/event-log.port';
import { EventWebhookClaims } from '../store/event-webhook-claims.port';
import { EventWebhookClaim, EventWebhookRecord } from '../store/event-webhook-records';

/** The event webhooks' delivery settings (EventWebhooksModule provides them from AppConfig). */
export abstract class EventWebhookDispatcherOptions {
  /** The retry schedule (WEBHOOK_RETRY_BACKOFF_MS): a delay per failed attempt, then dead-lettered. */
  abstract readonly backoffMs: number[];
  /** One attempt's deadline (WEBHOOK_TIMEOUT_MS): a claim always outlives the attempt under way by more. */
  abstract readonly timeoutMs: number;
  /** The repair poll (WEBHOOK_POLL_MS): appends on other instances, due retries, lapsed claims. */
  abstract readonly pollMs: number;
  /** Subscriptions this instance delivers at once (WEBHOOK_CONCURRENCY). */
  abstract readonly concurrency: number;
  /** Dead letters in a row that suspend a subscription (a receiver that is gone, not one bad event). */
  abstract readonly suspendAfterDead: number;
}

/** Matching events read per store round trip, and positions scanned per read (so a rare filter costs bounded reads). */
const PAGE = 100;
const WINDOW = 1_000;
/** A claim is taken (and extended) for the attempt's deadline and this much more. */
const CLAIM_MARGIN_MS = 5_000;
/** An attempt starts only under a claim that outlives its deadline by this much (clock skew between instances included). */
const ATTEMPT_MARGIN_MS = 3_000;
const SECRETS_CACHE_MS = 1_000;
/**
 * A run that read the log to its end keeps its claim this long, then lets it go (and looks at the log
 * once more). Events close together go out under one claim (no claim and release writes each); an
 * append on another instance finds the subscription free (or this instance's look) within this time.
 */
export const IDLE_HOLD_MS = 250;
/** What runs the rounds (EventDeliveryTick): woken again when a round leaves work, or a run ends. */
export interface RoundRunner {
  wake(): void;
}

const key = (tenantId: string, webhookId: string) => `${tenantId}\u0000${webhookId}`;

/** The body of one delivery: the event as the log read shows it, `type: 'event'` first. */
export function eventMessage(e: StoredEvent): string {
  return stringifyJson({ type: 'event', ...storedEventView(e) });
}

/** `webhook-id`: the same for every attempt and replay of one event to one subscription, for receivers to deduplicate. */
export const eventMessageId = (webhookId: string, position: number) => `msg_${webhookId}_${position}`;

/**
 * The event webhooks' deliveries, one round at a time (EventDeliveryTick runs `run`): per
 * subscription one event at a time, in position order, the cursor moved in the store only after a
 * 2xx. A subscription is delivered by one instance at a time: it is claimed in the store (owner +
 * until, extended with each step so that it always outlives the attempt under way), and every
 * write while delivering is fenced by the claim and the cursor read, so a lapsed claim, a replay
 * or a delete stops a run at its next write. A crashed instance's claims lapse after
 * WEBHOOK_TIMEOUT_MS + 5 s and the poll of another instance takes them.
 *
 * A round is one statement over the active subscriptions that have events after their cursor
 * (woken by appends on this instance through EventWebhookDispatcher, and by the tick's poll every
 * `pollMs`: appends on other instances, due retries, lapsed claims).
 */
@Injectable()
export class EventWebhookRound {
  private readonly logger = new Logger('EventWebhookDispatcher');
  /** This process's claims: unique per process, readable in the store by an operator. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** Subscriptions this instance is delivering; `again`: woken meanwhile, read once more before letting go. */
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();
  /**
   * Claims this instance holds, with their `until` as last written. A run that has read the log to
   * its end keeps its claim for IDLE_HOLD_MS (no write): a wake-up within it delivers at once without
   * claiming again, which saves two store writes per event while events come close together. Then it
   * is let go (holdIdle), and `close` lets go of the rest.
   */
  private readonly held = new Map<string, { tenantId: string; webhookId: string; until: number }>();
  /** Idle claims being let go: a new claim of the same subscription waits for its release to land. */
  private readonly releasing = new Map<string, Promise<void>>();
  /** The subscription a tick is claiming or reusing right now: its idle claim must not be let go meanwhile. */
  private reserved?: string;
  private readonly secretsCache = new LruMap<string, { secrets: string[]; until: number; generation: number }>(1_000);
  /** Set once by `stop` (the dispatcher's close): no new run, claims let go as their runs end. */
  closing = false;
  /**
   * Whether any event webhook is active, as the last poll saw it or as this instance made it since:
   * while none is (most services), an append wakes nothing, so it adds no store read to the append
   * path. A webhook made on another instance is seen by the next poll, which delivers anyway.
   */
  private anyActive = true;
  /** Bumped by every wake-up that says something may be due: a poll's answer read before it is stale. */
  private activations = 0;

  constructor(
    private readonly repo: EventWebhookClaims,
    private readonly secrets: WebhookSecrets,
    /** The POST: one attempt, SSRF-checked, 2xx or the reason. */
    private readonly transport: WebhookSender,
    private readonly options: EventWebhookDispatcherOptions,
    /** The tenant's webhooksInFlight quota (src/quotas), shared with the projection webhooks. */
    private readonly slots: TenantWebhookQuota,
  ) {}

  /** Whether an append should wake the tick: while no event webhook is active, an append adds no store read. */
  get wantsAppends(): boolean {
    return this.anyActive && !this.closing;
  }

  /** Something may be due (a webhook made, replayed or resumed; a run woken meanwhile): a poll's answer read before is stale. */
  activate(): void {
    this.anyActive = true;
    this.activations++;
  }

  /** The poll's look at whether any webhook is active (kept unless something was activated meanwhile). */
  checkActive(): void {
    const seen = this.activations;
    this.repo.anyActive().then(
      (active) => {
        if (this.activations === seen) this.anyActive = active;
      },
      () => undefined, // unknown: keep waking on appends
    );
  }

  /** No more runs start. */
  stop(): void {
    this.closing = true;
  }

  /** Lets go of every claim once its attempt under way has ended, so another instance takes over at once. */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done));
    await Promise.all(this.releasing.values());
    await Promise.all(
      [...this.held.values()].map((h) =>
        this.repo.release({ ...h, owner: this.owner, deliveredPosition: 0 }).catch((e) => this.logger.warn(`releasing a claim: ${e}`)),
      ),
    );
    this.held.clear();
  }

  /** A wake from within a round (a run woken meanwhile, a claim let go, a dead letter kept): as the dispatcher's wake. */
  private wake(tick: RoundRunner): void {
    this.activate();
    if (!this.closing) tick.wake();
  }

  /** How long a claim is taken for: past the attempt's deadline, with a margin. */
  private get claimMs(): number {
    return this.options.timeoutMs + CLAIM_MARGIN_MS;
  }

  /** One round (EventDeliveryTick runs them one at a time): the due subscriptions claimed and their runs started. */
  async run(tick: RoundRunner): Promise<void> {
    const now = Date.now();
    const due = await this.repo.due(now, this.owner, this.options.concurrency + this.running.size);
    for (const d of due) {
      if (this.closing) return;
      const id = key(d.tenantId, d.webhookId);
      const mine = this.running.get(id);
      if (mine) {
        mine.again = true;
        continue;
      }
      if (this.running.size >= this.options.concurrency) return;
      const claimed = await this.claimOrReuse(id, d.tenantId, d.webhookId, now);
      if (!claimed) continue;
      const entry = { again: false, done: Promise.resolve() };
      entry.done = this.deliver(claimed, entry, tick)
        .catch((e) => this.logger.warn(`event webhook ${d.webhookId} (tenant ${d.tenantId}): ${e instanceof Error ? e.message : e}`))
        .finally(() => {
          this.running.delete(id);
          if (entry.again) this.wake(tick);
        });
      this.running.set(id, entry);
    }
  }

  /**
   * The subscription's row under this instance's claim: a claim still held (and long enough for an
   * attempt) is used as it is, with a read of the row (a replay may have moved the cursor); else it
   * is claimed in the store.
   */
  private async claimOrReuse(id: string, tenantId: string, webhookId: string, now: number): Promise<EventWebhookRecord | null> {
    this.reserved = id;
    try {
      const h = this.held.get(id);
      if (h && h.until - now > this.options.timeoutMs + ATTEMPT_MARGIN_MS) {
        const row = await this.repo.get(tenantId, webhookId);
        if (row && row.status === 'active' && row.claimOwner === this.owner && row.claimUntil === h.until) return row;
      }
      this.held.delete(id);
      // An idle claim of ours being let go: claimed again only once that write has landed.
      await this.releasing.get(id);
      const row = await this.repo.claim(tenantId, webhookId, this.owner, now, now + this.claimMs);
      if (row) this.held.set(id, { tenantId, webhookId, until: row.claimUntil ?? 0 });
      return row;
    } finally {
      this.reserved = undefined;
    }
  }

  /** After IDLE_HOLD_MS with no new run of it, an idle claim is let go, and the log looked at once more. */
  private holdIdle(
    id: string,
    lease: { tenantId: string; webhookId: string; until: number },
    claim: EventWebhookClaim,
    tick: RoundRunner,
  ): void {
    const timer = setTimeout(() => {
      // A run (or a tick about to start one) has it again, or it was let go otherwise.
      if (this.closing || this.held.get(id) !== lease || this.running.has(id) || this.reserved === id) return;
      this.held.delete(id);
      const released = this.repo
        .release(claim)
        .catch((e) => this.logger.warn(`event webhook ${claim.webhookId}: letting its claim go: ${e instanceof Error ? e.message : e}`))
        .finally(() => {
          this.releasing.delete(id);
          this.wake(tick);
        });
      this.releasing.set(id, released);
    }, IDLE_HOLD_MS);
    timer.unref();
  }

  /** Delivers the subscription's events from its cursor until none is left, an attempt fails, or the claim is lost. */
  private async deliver(w: EventWebhookRecord, entry: { again: boolean }, tick: RoundRunner): Promise<void> {
    const claim: EventWebhookClaim = {
      tenantId: w.tenantId,
      webhookId: w.webhookId,
      owner: this.owner,
      deliveredPosition: w.deliveredPosition,
    };
    const id = key(w.tenantId, w.webhookId);
    /** Until when this run's claim holds, as last written (shared with `held`, so the next run can reuse it). */
    const lease = { tenantId: w.tenantId, webhookId: w.webhookId, until: w.claimUntil ?? 0 };
    this.held.set(id, lease);
    /** The claim let go in the store (or lost): forgotten here too. */
    const letGo = async (release: boolean) => {
      this.held.delete(id);
      if (release) await this.repo.release(claim);
    };
    let attempts = w.attempts;
    // A retry not yet due (claimed by the poll of an instance whose clock runs ahead): leave it for later.
    if (w.nextAttemptAt > Date.now()) return letGo(true);
    for (;;) {
      entry.again = false;
      const page = await this.repo.eventsAfter(w, claim.deliveredPosition, PAGE, WINDOW);
      if (page.events.length === 0) {
        if (page.extent > claim.deliveredPosition) {
          // Only filtered-out events: the cursor passes them, so the next read starts after them.
          if (!(await this.repo.advance(claim, page.extent, (lease.until = Date.now() + this.claimMs)))) return letGo(false);
          claim.deliveredPosition = page.extent;
          continue;
        }
        if (entry.again) continue;
        // Read to the end: the claim is kept a moment (see `held`), or let go when stopping.
        if (this.closing) return letGo(true);
        return this.holdIdle(id, lease, claim, tick);
      }
      for (const e of page.events) {
        if (this.closing) return letGo(true);
        // The claim must outlive this attempt (its deadline and the margin): extended first when it would not.
        if (lease.until - Date.now() < this.options.timeoutMs + ATTEMPT_MARGIN_MS) {
          if (!(await this.repo.renew(claim, (lease.until = Date.now() + this.claimMs)))) return letGo(false);
        }
        const slot = await this.slots.acquireWebhookSlot(w.tenantId);
        if (!slot) {
          // The tenant's webhooksInFlight quota is taken: let go, the poll comes back (not an attempt, nothing counted).
          return letGo(true);
        }
        let r: SendResult;
        try {
          r = await this.attempt(w, e);
        } finally {
          slot();
        }
        const now = Date.now();
        if (r.ok) {
          if (!(await this.repo.advance(claim, e.position, (lease.until = now + this.claimMs)))) return letGo(false);
          claim.deliveredPosition = e.position;
          attempts = 0;
          continue;
        }
        attempts++;
        const error = r.error.slice(0, 1_000);
        const delay = this.options.backoffMs[attempts - 1];
        // Both writes below let the claim go in the store.
        this.held.delete(id);
        if (delay !== undefined) {
          await this.repo.attemptFailed(claim, attempts, error, now + delay, now);
          return;
        }
        const kept = await this.repo.deadLettered(claim, e, attempts, error, now, this.options.suspendAfterDead);
        this.logger.warn(`event webhook ${w.webhookId} (tenant ${w.tenantId}): event at position ${e.position} dead-lettered: ${error}`);
        // Dead letters end the run: the next event is taken by the next tick, from the store (suspended or not).
        if (kept) this.wake(tick);
        return;
      }
    }
  }

  private async attempt(w: EventWebhookRecord, e: StoredEvent): Promise<SendResult> {
    const body = eventMessage(e);
    const secrets = await this.signing(w.tenantId);
    const headers: Record<string, string> = {
      ...WebhookSigner.headers(secrets, eventMessageId(w.webhookId, e.position), Math.floor(Date.now() / 1000), body),
      // What a receiver needs to see a gap (dead letters) and to fetch it: GET /events/{aggregateId} or the log read.
      'webhook-position': String(e.position),
      'webhook-subscription-id': w.webhookId,
      // The caller's W3C trace context stored with the event (README "Trace context"), whether or not this service traces.
      ...(e.traceParent ? { traceparent: e.traceParent } : {}),
      ...(e.traceState ? { tracestate: e.traceState } : {}),
    };
    return this.transport.send(w.url, headers, body);
  }

  /**
   * The tenant's shared secret (and the previous one during a rotation's overlap), cached for a
   * second; a rotation on this instance shows at once (the secrets' generation moved).
   */
  private async signing(tenantId: string): Promise<string[]> {
    const generation = this.secrets.generation;
    const hit = this.secretsCache.get(tenantId);
    if (hit && hit.until > Date.now() && hit.generation === generation) return hit.secrets;
    // The projection id is not used for the tenant's shared secret.
    const secrets = await this.secrets.signing(tenantId, '', false);
    this.secretsCache.set(tenantId, { secrets, until: Date.now() + SECRETS_CACHE_MS, generation });
    return secrets;
  }
}
