/**
 * Runs `work` one at a time. A wake while it runs makes exactly one more run afterwards: a wake is
 * never lost and runs never overlap (routers, the webhook dispatcher).
 */
export class SerialRunner {
  private running?: Promise<void>;
  private again = false;
  private stoppedFlag = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  wake(): void {
    if (this.stoppedFlag) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.work()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when the run under way (if any) has finished; later runs are not waited for. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** No more runs; resolves when the current one has finished. */
  async stop(): Promise<void> {
    this.stoppedFlag = true;
    await this.running;
  }
}
