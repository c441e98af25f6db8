/**
 * Runs work one at a time per key, in arrival order; different keys run concurrently.
 * Used so that an aggregate's state is computed from the result of its previous append.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /**
   * Runs `fn` holding every one of `keys` at once. They are taken in sorted order, so two callers
   * holding overlapping sets cannot wait on each other (a multi-aggregate transaction's members).
   */
  runAll<T>(keys: string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    return sorted.reduceRight<() => Promise<T>>((inner, key) => () => this.run(key, inner), fn)();
  }
}
