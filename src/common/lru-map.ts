/** A Map bounded in size that evicts the least recently written entry. */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key); // re-insert at the end
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  deleteWhere(pred: (key: K, value: V) => boolean): void {
    for (const [k, v] of this.map) if (pred(k, v)) this.map.delete(k);
  }

  clear(): void {
    this.map.clear();
  }
}
