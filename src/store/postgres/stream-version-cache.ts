import { LruMap } from '../../common/lru-map';
import { StreamInfo } from '../event-log.port';

/**
 * Last known type and version of recently written aggregates, so an append can be planned
 * without a read round trip. Only a hint: the append statement re-checks every assumed version
 * and a stale entry costs one retry, never a wrong answer.
 */
export class StreamVersionCache {
  private readonly map: LruMap<string, StreamInfo>;

  constructor(capacity = 100_000) {
    this.map = new LruMap(capacity);
  }

  get(key: string): StreamInfo | undefined {
    return this.map.get(key);
  }

  set(key: string, info: StreamInfo): void {
    this.map.set(key, info);
  }

  forget(keys: Iterable<string>): void {
    for (const k of keys) this.map.delete(k);
  }
}
