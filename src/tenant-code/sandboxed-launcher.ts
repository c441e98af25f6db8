import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { findRuntimeDll, HostLauncher } from './host/host-launcher';
import { SandboxStatus, verifySandbox } from './host/sandbox-check';

const MB = 1024 * 1024;

/** Heap cap and RLIMIT_DATA (4× the cap + 1 GiB: the GC reserves address space well past what it commits). */
const limits = (heapMb: number) => ({ gcHeapBytes: heapMb * MB, dataBytes: heapMb * 4 * MB + 1024 * MB });

/** The service's host launcher, with the sandbox fences found at start (health reports them). */
export class SandboxedLauncher {
  constructor(
    readonly launcher: HostLauncher,
    readonly status: SandboxStatus,
  ) {}
}

/** Checks every sandbox fence before the service starts (strict: a missing one refuses the start). */
export async function createLauncher(config: AppConfig): Promise<SandboxedLauncher> {
  const launcher = new HostLauncher(findRuntimeDll(config.runtime.dir), {
    exec: limits(config.runtime.execHeapMb),
    compile: limits(config.runtime.compileHeapMb),
    sandbox: config.runtime.sandbox,
  });
  const status = await verifySandbox(launcher);
  const log = new Logger('Runtime');
  for (const [fence, why] of Object.entries(status.missing))
    log.warn(`RUNTIME_SANDBOX=${status.mode}: runtime hosts run without the '${fence}' fence: ${why}`);
  if (status.runtimeError) log.error(`the runtime host does not start: ${status.runtimeError}`);
  return new SandboxedLauncher(launcher, status);
}
