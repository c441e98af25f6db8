import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { LaneApplied } from '../../lanes/lane-applied.port';
import { LaneRef } from '../../lanes/lane-scheduler.port';

/** Told of every wake, whatever the projection and wherever its lane ran (WebhookDispatcher). */
export interface NotifiedProjections {
  notified(tenantId: string, projectionId: string): void;
}

const CHANNEL = 'es:notifications';
const COALESCE_MS = 2;

/** The last sequence logged for a projection (0 when none), as the store has it now. */
export type HeadSequence = (tenantId: string, projectionId: string) => Promise<number>;

/**
 * "Projection P may have new notifications": a wake-up only. What is new is always read from the
 * store by sequence, so a lost or doubled wake costs latency, never a gap or a duplicate. With
 * Redis, wakes also travel between instances (a lane that ran elsewhere wakes this instance's
 * streams); Redis stays a doorbell, not a queue. It is the lanes' LANE_APPLIED binding.
 *
 * Without Redis (in-process lanes on a shared PostgreSQL), or while it is down, a lane that ran on
 * another instance wakes no stream here: its last notifications would wait for the next local
 * lane run, for ever if none comes (issue 23's stream missing the last two of 480). So every
 * `pollMs` the store's head sequence of each projection streamed here is read (one indexed read
 * per projection, not per connection) and its streams are woken when it moved.
 */
export class NotificationFeed implements LaneApplied {
  private readonly logger = new Logger('NotificationFeed');
  private readonly byProjection = new Map<string, Set<() => void>>();
  private readonly instance = randomUUID();
  private readonly scheduled = new Set<string>();
  private pub?: Redis;
  private sub?: Redis;
  /** The head sequence the poll last saw, per projection with local subscribers. */
  private readonly polledHead = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;

  constructor(private readonly webhooks: NotifiedProjections) {}

  async connect(redisUrl: string): Promise<void> {
    const { default: IORedis } = await import('ioredis');
    this.pub = new IORedis(redisUrl, { connectionName: 'es:notify:pub', maxRetriesPerRequest: 2 });
    this.sub = new IORedis(redisUrl, { connectionName: 'es:notify:sub', maxRetriesPerRequest: null });
    for (const c of [this.pub, this.sub]) c.on('error', (e) => this.logger.warn(`redis: ${e.message}`));
    this.sub.on('message', (_channel: string, message: string) => {
      const [from, tenantId, projectionId] = message.split('\u0000');
      if (from !== this.instance && tenantId && projectionId) this.wakeLocal(tenantId, projectionId);
    });
    await this.sub.subscribe(CHANNEL);
  }

  /** Starts the store poll (see the class comment); `pollMs` bounds how late a wake from elsewhere can be. */
  startPolling(head: HeadSequence, pollMs: number): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.poll(head), pollMs);
    this.pollTimer.unref();
  }

  /** A lane run of this instance stored; if it logged notifications, they go out. */
  laneApplied(lane: LaneRef, _appliedPosition: number, notifiedProjection: string | null): void {
    if (notifiedProjection) this.publish(lane.tenantId, notifiedProjection);
  }

  /**
   * A lane of this instance logged notifications for the projection. Wakes are coalesced per
   * projection for COALESCE_MS: at 1,000 lane commits/s, each stream client is woken (and writes
   * its socket) a few hundred times a second instead of once per commit.
   */
  publish(tenantId: string, projectionId: string): void {
    const id = `${tenantId}\u0000${projectionId}`;
    if (this.scheduled.has(id)) return;
    this.scheduled.add(id);
    setTimeout(() => {
      this.scheduled.delete(id);
      this.wakeLocal(tenantId, projectionId);
      this.pub?.publish(CHANNEL, `${this.instance}\u0000${id}`).catch(() => undefined);
    }, COALESCE_MS);
  }

  subscribe(tenantId: string, projectionId: string, wake: () => void): () => void {
    const id = `${tenantId}\u0000${projectionId}`;
    let set = this.byProjection.get(id);
    if (!set) this.byProjection.set(id, (set = new Set()));
    set.add(wake);
    return () => {
      set!.delete(wake);
      if (set!.size === 0 && this.byProjection.get(id) === set) {
        this.byProjection.delete(id);
        this.polledHead.delete(id);
      }
    };
  }

  async close(): Promise<void> {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await Promise.all([this.pub, this.sub].map((c) => c?.quit().catch(() => c.disconnect())));
  }

  private async poll(head: HeadSequence): Promise<void> {
    // A slow store must not stack polls: the next tick after this one ends reads again.
    if (this.polling) return;
    this.polling = true;
    try {
      for (const id of [...this.byProjection.keys()]) {
        const [tenantId, projectionId] = id.split('\u0000');
        let now: number;
        try {
          now = await head(tenantId, projectionId);
        } catch (e) {
          // The streams read the same store and fail on their own; the next tick tries again.
          this.logger.debug(`head poll: ${e instanceof Error ? e.message : String(e)}`);
          continue;
        }
        const before = this.polledHead.get(id);
        if (!this.byProjection.has(id)) continue;
        this.polledHead.set(id, now);
        // Woken after the read: a cursor woken now reads at least up to `now`. The first look at a
        // projection wakes too (cheap: a cursor at the head reads one empty page).
        if (before === undefined || now > before) for (const w of this.byProjection.get(id) ?? []) w();
      }
    } finally {
      this.polling = false;
    }
  }

  private wakeLocal(tenantId: string, projectionId: string): void {
    for (const w of this.byProjection.get(`${tenantId}\u0000${projectionId}`) ?? []) w();
    this.webhooks.notified(tenantId, projectionId);
  }
}
