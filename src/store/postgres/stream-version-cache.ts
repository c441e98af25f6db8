import { StreamInfo } from '../event-log.port';

/**
 * Last known type and version of recently written aggregates, so an append can be planned
 * without a read round trip. Only a hint: the append statement re-checks every assumed version
 * and a stale entry costs one retry, never a wrong answer.
 */
export class StreamVersionCache {
  private readonly map = new Map<string, StreamInfo>();

  constructor(private readonly capacity = 100_000) {}

  get(key: string): StreamInfo | undefined {
    return this.map.get(key);
  }

  set(key: string, info: StreamInfo): void {
    this.map.delete(key); // re-insert at the end: eviction takes the least recently written
    this.map.set(key, info);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }

  forget(keys: Iterable<string>): void {
    for (const k of keys) this.map.delete(k);
  }
}
