import { LruMap } from '../../common/lru-map';
import { Notification } from '../log/notification';

type Read = (tenantId: string, projectionId: string, afterSequence: number, limit: number) => Promise<Notification[]>;

const TAIL_ROWS = 512;
const PROJECTIONS = 256;

interface Tail {
  /** Contiguous by sequence, ascending: the newest notifications read so far. */
  rows: Notification[];
  inFlight: Map<string, Promise<Notification[]>>;
}

/**
 * Many stream clients of one projection ask for the same page at the same moment (a wake-up
 * moves them all). One store read serves them all, and the newest rows stay here so that a
 * client at the tail is answered from memory; a client further back reads the store. Rows are
 * immutable once logged, so the cache can only be behind, never wrong. Bounded: 512 rows for
 * each of the 256 most recently read projections.
 */
export class NotificationTail {
  private readonly tails = new LruMap<string, Tail>(PROJECTIONS);

  constructor(private readonly readStore: Read) {}

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]> {
    const id = `${tenantId}\u0000${projectionId}`;
    // Set again on every read: LruMap evicts the least recently *written*, and a tail is hot by reads.
    const tail = this.tails.get(id) ?? { rows: [], inFlight: new Map<string, Promise<Notification[]>>() };
    this.tails.set(id, tail);
    const rows = tail.rows;
    if (rows.length && afterSequence >= rows[0].sequence - 1 && afterSequence < rows[rows.length - 1].sequence) {
      const from = afterSequence - rows[0].sequence + 1;
      return rows.slice(from, from + limit);
    }
    const key = `${afterSequence}:${limit}`;
    let p = tail.inFlight.get(key);
    if (!p) {
      const t = tail;
      p = this.readStore(tenantId, projectionId, afterSequence, limit).then(
        (fresh) => {
          t.inFlight.delete(key);
          this.keep(t, fresh);
          return fresh;
        },
        (e) => {
          t.inFlight.delete(key);
          throw e;
        },
      );
      tail.inFlight.set(key, p);
    }
    return p;
  }

  private keep(tail: Tail, fresh: Notification[]): void {
    if (!fresh.length) return;
    const last = tail.rows[tail.rows.length - 1];
    if (!last || fresh[0].sequence !== last.sequence + 1) {
      // Not contiguous with what is kept (a client far behind): keep only the newest of the two.
      if (last && fresh[fresh.length - 1].sequence <= last.sequence) return;
      tail.rows = fresh.slice(-TAIL_ROWS);
      return;
    }
    tail.rows.push(...fresh);
    if (tail.rows.length > TAIL_ROWS) tail.rows = tail.rows.slice(-TAIL_ROWS);
  }
}
