import { LaneApplied } from '../../lanes/lane-applied.port';
import { LaneRef } from '../../lanes/lane-scheduler.port';
import { WakeBus } from './wake-bus';

/** Told of every wake, whatever the projection and wherever its lane ran (WebhookDispatcher). */
export interface NotifiedProjections {
  notified(tenantId: string, projectionId: string): void;
}

const CHANNEL = 'es:notifications';

/** The last sequence logged for a projection (0 when none), as the store has it now. */
export type HeadSequence = (tenantId: string, projectionId: string) => Promise<number>;

/**
 * "Projection P may have new notifications": a wake-up only (WakeBus: coalesced, across instances
 * with Redis, and a poll of the store's head sequence of each projection streamed here, for the
 * lanes of another instance when Redis is absent or down — issue 23's stream missing the last two
 * of 480). It is the lanes' LaneApplied binding.
 */
export class NotificationFeed implements LaneApplied {
  private readonly bus: WakeBus;

  constructor(webhooks: NotifiedProjections) {
    // At 1,000 lane commits/s, each stream client is woken (and writes its socket) a few hundred times a second, not once per commit.
    this.bus = new WakeBus(CHANNEL, ([tenantId, projectionId]) => {
      if (tenantId && projectionId) webhooks.notified(tenantId, projectionId);
    });
  }

  connect(redisUrl: string): Promise<void> {
    return this.bus.connect(redisUrl);
  }

  /** Starts the store poll; `pollMs` bounds how late a wake from elsewhere can be. */
  startPolling(head: HeadSequence, pollMs: number): void {
    this.bus.startPolling(([t, p]) => head(t, p), pollMs);
  }

  /** A lane run of this instance stored; if it logged notifications, they go out. */
  laneApplied(lane: LaneRef, _appliedPosition: number, notifiedProjection: string | null): void {
    if (notifiedProjection) this.publish(lane.tenantId, notifiedProjection);
  }

  /** A lane of this instance logged notifications for the projection (coalesced per projection). */
  publish(tenantId: string, projectionId: string): void {
    this.bus.publish([tenantId, projectionId]);
  }

  subscribe(tenantId: string, projectionId: string, wake: () => void): () => void {
    return this.bus.subscribe([tenantId, projectionId], wake);
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
