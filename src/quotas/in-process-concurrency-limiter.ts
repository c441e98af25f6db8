import { ConcurrencyLimiter, REFUSED_SLOT, SlotGrant } from './concurrency-limiter.port';

/** Slots counted in this process; a key with none held takes no memory. */
export class InProcessConcurrencyLimiter implements ConcurrencyLimiter {
  readonly kind = 'in-process';
  private readonly held = new Map<string, number>();

  async acquire(key: string, limit: number): Promise<SlotGrant> {
    return this.acquireNow(key, limit);
  }

  acquireNow(key: string, limit: number): SlotGrant {
    const held = this.held.get(key) ?? 0;
    if (held >= limit) return REFUSED_SLOT(held);
    this.held.set(key, held + 1);
    let released = false;
    return {
      granted: true,
      held: held + 1,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.held.get(key) ?? 1) - 1;
        if (left <= 0) this.held.delete(key);
        else this.held.set(key, left);
      },
    };
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}
