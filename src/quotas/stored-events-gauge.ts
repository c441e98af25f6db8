import { LruMap } from '../common/lru-map';
import { EventLog } from '../store/event-log.port';

interface Reading {
  /** The tenant's head position when read: positions are gap-free from 1 and events never deleted, so it is the count stored. */
  stored: number;
  /** Events this instance admitted since. */
  admitted: number;
  at: number;
}

/**
 * How many events a tenant has stored, for the stored-events quota, without a read per append:
 * the head position read from the store at most every `refreshMs`, plus what this instance has
 * admitted since. So the cap is soft by what other instances append within `refreshMs` and what
 * is in flight at once; a request refused for it stores nothing.
 */
export class StoredEventsGauge {
  private readonly readings = new LruMap<string, Reading>(100_000);

  constructor(
    private readonly log: Pick<EventLog, 'headPosition'>,
    private readonly refreshMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts `n` more events if they fit under `limit`; returns the count stored before them either way. */
  async admit(tenantId: string, n: number, limit: number): Promise<{ admitted: boolean; stored: number }> {
    let r = this.readings.get(tenantId);
    if (!r || this.now() - r.at >= this.refreshMs) {
      r = { stored: await this.log.headPosition(tenantId), admitted: 0, at: this.now() };
      this.readings.set(tenantId, r);
    }
    const stored = r.stored + r.admitted;
    if (stored + n > limit) return { admitted: false, stored };
    r.admitted += n;
    return { admitted: true, stored };
  }
}
