import { LruMap } from '../../common/lru-map';
import { Notification } from '../log/notification';

type Read = (tenantId: string, projectionId: string, afterSequence: number, limit: number) => Promise<Notification[]>;

const TAIL_ROWS = 512;
const PROJECTIONS = 256;
/**
 * How long a row read from the store may be served from memory. A notification's state can change
 * once after it was logged: an erasure (README "Erasure") rewrites it to {} on the store, and this
 * cache, on every instance, must not go on serving the old one. The tail's purpose — the clients a
 * wake-up moves at one moment share one read — needs only a moment.
 */
export const TAIL_TTL_MS = 1_000;

interface Tail {
  /** Contiguous by sequence, ascending: the newest notifications read so far. */
  rows: Notification[];
  /** When each row of `rows` was read from the store (epoch ms), in the same order. */
  keptAt: number[];
  inFlight: Map<string, Promise<Notification[]>>;
}

/**
 * Many stream clients of one projection ask for the same page at the same moment (a wake-up
 * moves them all). One store read serves them all, and the newest rows stay here so that a
 * client at the tail is answered from memory; a client further back reads the store. Rows are
 * immutable once logged but for an erasure, which rewrites their state: so a row is served from
 * here for TAIL_TTL_MS after it was read, no longer. Bounded: 512 rows for each of the 256 most
 * recently read projections.
 */
export class NotificationTail {
  private readonly tails = new LruMap<string, Tail>(PROJECTIONS);

  constructor(
    private readonly readStore: Read,
    private readonly now: () => number = Date.now,
  ) {}

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]> {
    const id = `${tenantId}\u0000${projectionId}`;
    // Set again on every read: LruMap evicts the least recently *written*, and a tail is hot by reads.
    const tail = this.tails.get(id) ?? { rows: [], keptAt: [], inFlight: new Map<string, Promise<Notification[]>>() };
    this.tails.set(id, tail);
    this.expire(tail);
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
    const at = this.now();
    const last = tail.rows[tail.rows.length - 1];
    if (!last || fresh[0].sequence !== last.sequence + 1) {
      // Not contiguous with what is kept (a client far behind): keep only the newest of the two.
      if (last && fresh[fresh.length - 1].sequence <= last.sequence) return;
      tail.rows = fresh.slice(-TAIL_ROWS);
      tail.keptAt = tail.rows.map(() => at);
      return;
    }
    tail.rows.push(...fresh);
    for (let i = 0; i < fresh.length; i++) tail.keptAt.push(at);
    if (tail.rows.length > TAIL_ROWS) {
      tail.rows = tail.rows.slice(-TAIL_ROWS);
      tail.keptAt = tail.keptAt.slice(-TAIL_ROWS);
    }
  }

  /** Rows are kept in the order they were read, so the expired ones are a prefix (still contiguous after). */
  private expire(tail: Tail): void {
    const oldest = this.now() - TAIL_TTL_MS;
    let n = 0;
    while (n < tail.keptAt.length && tail.keptAt[n] < oldest) n++;
    if (n === 0) return;
    tail.rows = tail.rows.slice(n);
    tail.keptAt = tail.keptAt.slice(n);
  }
}
