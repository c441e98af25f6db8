import { HostProcess } from '../host/host-process';
import { ExecutorCall } from './executor-call';

/** A call the host reported running past `stallMs`. */
export interface Stall {
  host: HostProcess;
  call: ExecutorCall;
  ms: number;
}

/**
 * Shared executors: the call that has been running past `stallMs` (reported by the host), and, once
 * calls of other tenants wait behind it, the one whose process is being replaced for it (killed for
 * it, not by it: it runs again where its tenant goes, unfailed). Executor.replaceStalled acts on it.
 */
export class StallWatch {
  private stall?: Stall;
  /** The stalled call whose process is being replaced. */
  replacing?: ExecutorCall;

  /** A call of `host` stalls: kept (true) while `host` is the executor's running one and the call unanswered. */
  report(host: HostProcess, running: HostProcess | undefined, call: ExecutorCall | undefined, ms: number): boolean {
    if (host !== running || !call || call.settled) return false;
    this.stall = { host, call, ms };
    return true;
  }

  get pending(): boolean {
    return this.stall !== undefined;
  }

  /**
   * The stall to act on now: its call still running on `running`, and another tenant waiting
   * (`othersWaiting`). It is then marked stalled and replacing; undefined: not now (or no longer).
   */
  due(running: HostProcess | undefined, othersWaiting: (tenantId: string) => boolean): Stall | undefined {
    const stall = this.stall!;
    const { host, call } = stall;
    if (host !== running || call.settled || !host.alive) {
      this.stall = undefined;
      return undefined;
    }
    if (!othersWaiting(call.tenantId)) return undefined;
    this.stall = undefined;
    call.stalled = true;
    this.replacing = call;
    return stall;
  }
}
