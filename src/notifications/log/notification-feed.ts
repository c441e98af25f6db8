import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { LaneApplied } from '../../lanes/lane-applied.port';
import { LaneRef } from '../../lanes/lane-scheduler.port';
import { NotificationReader } from './notification-reader';
import { NotifiedProjections } from './notified-projections.port';
import { StreamWakeups } from './stream-wakeups.port';
import { WakeBus } from './wake-bus';

const CHANNEL = 'es:notifications';

/**
 * "Projection P may have new notifications": a wake-up only (WakeBus: coalesced, across instances
 * with Redis, and a poll of the store's head sequence of each projection streamed here, for the
 * lanes of another instance when Redis is absent or down — issue 23's stream missing the last two
 * of 480). The lanes' LaneApplied binding. A wake reaches the projection's streams on this instance
 * (StreamWakeups: the stream hub) and its webhook (NotifiedProjections: the dispatcher); the poll's
 * reaches the streams only.
 */
@Injectable()
export class NotificationFeed extends WakeBus implements LaneApplied {
  constructor(
    private readonly streams: StreamWakeups,
    private readonly webhooks: NotifiedProjections,
    private readonly reader: NotificationReader,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'redisUrl' | 'notifications'>,
  ) {
    // At 1,000 lane commits/s, each stream client is woken (and writes its socket) a few hundred times a second, not once per commit.
    super(CHANNEL, { redisUrl: config.redisUrl, pollMs: config.notifications.pollMs });
  }

  /** A lane run of this instance stored; if it logged notifications, they go out (coalesced per projection). */
  laneApplied(lane: LaneRef, _appliedPosition: number, notifiedProjection: string | null): void {
    if (notifiedProjection) this.publish([lane.tenantId, notifiedProjection]);
  }

  protected woken([tenantId, projectionId]: string[]): void {
    if (!tenantId || !projectionId) return;
    this.streams.wakeProjection(tenantId, projectionId);
    this.webhooks.notified(tenantId, projectionId);
  }

  protected headMoved([tenantId, projectionId]: string[]): void {
    this.streams.wakeProjection(tenantId, projectionId);
  }

  protected watchedKeys(): string[][] {
    return this.streams.streamedProjections();
  }

  protected headOf([tenantId, projectionId]: string[]): Promise<number> {
    return this.reader.headSequence(tenantId, projectionId);
  }
}
