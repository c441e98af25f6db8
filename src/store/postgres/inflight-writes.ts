/** Counts writes in flight so close() can wait for them instead of cutting them off. */
export class InflightWrites {
  private count = 0;
  private idle: (() => void)[] = [];
  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.count++;
    try {
      return await fn();
    } finally {
      if (--this.count === 0) this.idle.splice(0).forEach((r) => r());
    }
  }
  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }
}
