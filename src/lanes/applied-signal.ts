/**
 * Tells waiting readers (a state read with minPosition) that a lane of this process applied
 * events, so they re-check at once instead of polling. Readers still re-check the store on a
 * short timer: the lane may have run in another instance.
 */
export class AppliedSignal {
  private readonly waiters = new Map<string, Set<() => void>>();

  notify(versionId: string, key: string): void {
    const id = `${versionId}\u0000${key}`;
    const set = this.waiters.get(id);
    if (!set) return;
    this.waiters.delete(id);
    for (const w of set) w();
  }

  /** Resolves on the next notify for the lane, or after `ms`. */
  wait(versionId: string, key: string, ms: number): Promise<void> {
    const id = `${versionId}\u0000${key}`;
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        set!.delete(done);
        if (set!.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }
}
