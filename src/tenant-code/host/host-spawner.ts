import * as fs from 'node:fs';
import { AppMetrics } from '../../observability/metrics/app-metrics';
import { HostLauncher } from './host-launcher';
import { HostProcess } from './host-process';
import { HostMode } from './runtime-protocol';

/** coreutils' nice, if the machine has it (quarantine executors run at the lowest priority). */
const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => fs.existsSync(p));
/**
 * util-linux's chrt, if the machine has it: quarantine executors also run under SCHED_IDLE. Nice 19 alone
 * was measured not to be enough on 2 cores: a quarantined spinner still took 67–99 % of a core and the
 * innocents' throughput fell by a third (a nice-19 task keeps a core until the scheduler's next tick;
 * an idle-policy task yields at once to any normal one that wakes).
 */
const CHRT = ['/usr/bin/chrt', '/bin/chrt'].find((p) => fs.existsSync(p));

export interface HostSpawnerOptions {
  /** Compiler slots: a compiler's start beyond the first of each is a restart. */
  compilerHosts: number;
  readyTimeoutMs: number;
  maxLineBytes: number;
}

/** Starts the pool's host processes (compilers and executors), sandboxed by the launcher, and counts the starts for the metrics. */
export class HostSpawner {
  /** Processes started per executor label ('compiler' for the compiler slots): beyond the first, a restart (metrics). */
  private readonly starts = new Map<string, number>();

  constructor(
    private readonly launcher: HostLauncher,
    private readonly options: HostSpawnerOptions,
    private readonly metrics: AppMetrics,
  ) {}

  /**
   * `lowPriority` (quarantine executors): the whole sandboxed chain runs under `chrt --idle 0` and `nice -n 19`, and the
   * host sets its own scheduling group (kernel autogroup: bwrap's new session is one) to nice 19
   * too — the nice value alone counts only inside the group — so a tenant whose calls spin until
   * their deadline burns only the CPU nobody else wants. `nice` execs, like every wrapper of the
   * chain: the process Node holds is still bwrap.
   */
  spawn(mode: HostMode, label: string, lowPriority = false): Promise<HostProcess> {
    let launch = this.launcher.launch(mode, { lowPriority });
    if (lowPriority && NICE) launch = { ...launch, command: NICE, args: ['-n', '19', launch.command, ...launch.args] };
    if (lowPriority && CHRT) launch = { ...launch, command: CHRT, args: ['--idle', '0', launch.command, ...launch.args] };
    const started = (this.starts.get(label) ?? 0) + 1;
    this.starts.set(label, started);
    this.metrics.hostStarted(mode === 'compile' ? 'compile' : 'exec', started > (mode === 'compile' ? this.options.compilerHosts : 1));
    return HostProcess.start({
      mode,
      label,
      launch,
      readyTimeoutMs: this.options.readyTimeoutMs,
      maxLineBytes: this.options.maxLineBytes,
    });
  }
}
