import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { EventsAppended } from '../../events/append-committed.port';
import { EventLog } from '../../store/event-log.port';
import { STORE, Store } from '../../store/store.port';
import { StreamWakeups } from './stream-wakeups.port';
import { WakeBus } from './wake-bus';

const CHANNEL = 'es:events';

/**
 * "Tenant T's log may have grown": the doorbell of the event streams (and of whatever else follows
 * the log live). Rung by every acknowledged append of this instance (the events' EventsAppended
 * binding), by other instances through Redis, and by the poll of each streamed tenant's head
 * position (STREAM_POLL_MS) when Redis is absent or down. A wake only: the streams (StreamWakeups:
 * the stream hub) read the log by position.
 */
@Injectable()
export class EventFeed extends WakeBus implements EventsAppended {
  private readonly log: Pick<EventLog, 'headPosition'>;

  constructor(
    private readonly streams: StreamWakeups,
    @Inject(STORE) store: Store,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'redisUrl' | 'notifications'>,
  ) {
    super(CHANNEL, { redisUrl: config.redisUrl, pollMs: config.notifications.pollMs }, 2, true);
    this.log = store.events;
  }

  appended(tenantId: string): void {
    this.publish([tenantId]);
  }

  protected woken([tenantId]: string[]): void {
    if (tenantId) this.streams.wakeEventStreams(tenantId);
  }

  protected headMoved([tenantId]: string[]): void {
    this.streams.wakeEventStreams(tenantId);
  }

  protected watchedKeys(): string[][] {
    return this.streams.streamedTenants().map((tenantId) => [tenantId]);
  }

  protected headOf([tenantId]: string[]): Promise<number> {
    return this.log.headPosition(tenantId);
  }
}
