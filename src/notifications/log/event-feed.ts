import { EventsAppended } from '../../events/append-committed.port';
import { WakeBus } from './wake-bus';

const CHANNEL = 'es:events';

/**
 * "Tenant T's log may have grown": the doorbell of the event streams (and of whatever else follows
 * the log live). Rung by every acknowledged append of this instance (bound to EVENTS_APPENDED),
 * by other instances through Redis, and by the poll of each streamed tenant's head position
 * (STREAM_POLL_MS) when Redis is absent or down. A wake only: the streams read the log by position.
 */
export class EventFeed implements EventsAppended {
  private readonly bus = new WakeBus(CHANNEL, undefined, 2, true);

  connect(redisUrl: string): Promise<void> {
    return this.bus.connect(redisUrl);
  }

  startPolling(head: (tenantId: string) => Promise<number>, pollMs: number): void {
    this.bus.startPolling(([t]) => head(t), pollMs);
  }

  appended(tenantId: string): void {
    this.bus.publish([tenantId]);
  }

  subscribe(tenantId: string, wake: () => void): () => void {
    return this.bus.subscribe([tenantId], wake);
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
