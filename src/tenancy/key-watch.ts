import { TenantRepository } from '../store/tenant-repository.port';

/** Key hashes asked about in one statement. */
const CHUNK = 500;

/**
 * Ends what a key opened long ago once the key stops being valid: a stream is authorised at its
 * upgrade and may then run for days, so a revoked or expired key's streams would otherwise outlive
 * it. Every `intervalMs`, while any stream is watched, ONE statement per 500 distinct keys asks
 * the store which of them are still live (not revoked, not expired); the watchers of the others
 * are called. Revocation on any instance thus ends the streams on every instance within
 * `intervalMs` (plus the statement's time); an idle instance (no streams) asks nothing.
 */
export class KeyWatch {
  private readonly watchers = new Map<string, Set<() => void>>();
  private timer?: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly repo: Pick<TenantRepository, 'liveKeyHashes'>,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Calls `onInvalid` once when the key is found revoked or expired; the returned function stops watching. */
  watch(keyHash: string, onInvalid: () => void): () => void {
    let set = this.watchers.get(keyHash);
    if (!set) this.watchers.set(keyHash, (set = new Set()));
    set.add(onInvalid);
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      const current = this.watchers.get(keyHash);
      current?.delete(onInvalid);
      if (current?.size === 0) this.watchers.delete(keyHash);
      this.stopWhenIdle();
    };
  }

  /** One pass (the timer's; tests call it directly). */
  async check(): Promise<void> {
    if (this.checking || this.watchers.size === 0) return;
    this.checking = true;
    try {
      const hashes = [...this.watchers.keys()];
      for (let i = 0; i < hashes.length; i += CHUNK) {
        const chunk = hashes.slice(i, i + CHUNK);
        const live = new Set(await this.repo.liveKeyHashes(chunk, this.now()));
        for (const hash of chunk) {
          if (live.has(hash)) continue;
          const set = this.watchers.get(hash);
          this.watchers.delete(hash);
          for (const onInvalid of set ?? []) onInvalid();
        }
      }
    } catch {
      // The store is unreachable: the streams go on, and the next pass asks again.
    } finally {
      this.checking = false;
      this.stopWhenIdle();
    }
  }

  watchedKeys(): number {
    return this.watchers.size;
  }

  private stopWhenIdle(): void {
    if (this.watchers.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
