import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';

type Listener = (tenantId: string, projectionId: string) => void;

const CHANNEL = 'es:notifications';
const COALESCE_MS = 2;

/**
 * "Projection P may have new notifications": a wake-up only. What is new is always read from the
 * store by sequence, so a lost or doubled wake costs latency, never a gap or a duplicate. With
 * Redis, wakes also travel between instances (a lane that ran elsewhere wakes this instance's
 * streams); Redis stays a doorbell, not a queue.
 */
export class NotificationFeed {
  private readonly logger = new Logger('NotificationFeed');
  private readonly byProjection = new Map<string, Set<() => void>>();
  private readonly anyListeners: Listener[] = [];
  private readonly instance = randomUUID();
  private readonly scheduled = new Set<string>();
  private pub?: Redis;
  private sub?: Redis;

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
      if (set!.size === 0 && this.byProjection.get(id) === set) this.byProjection.delete(id);
    };
  }

  /** Every wake, whatever the projection (the webhook dispatcher). */
  onAny(l: Listener): void {
    this.anyListeners.push(l);
  }

  async close(): Promise<void> {
    await Promise.all([this.pub, this.sub].map((c) => c?.quit().catch(() => c.disconnect())));
  }

  private wakeLocal(tenantId: string, projectionId: string): void {
    for (const w of this.byProjection.get(`${tenantId}\u0000${projectionId}`) ?? []) w();
    for (const l of this.anyListeners) l(tenantId, projectionId);
  }
}
