import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HostLaunch } from './host-process';
import { HostMode } from './runtime-protocol';

export interface SandboxLimits {
  /** Managed heap cap (DOTNET_GCHeapHardLimit). */
  gcHeapBytes: number;
  /** RLIMIT_DATA: everything the process maps writable, heap and native, with headroom over the GC cap. */
  dataBytes: number;
}

export interface SandboxReport {
  networkNamespace: boolean;
  rlimits: boolean;
}

function works(cmd: string, args: string[]): boolean {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}

/** The runtime host build: runtime/bin/ (runtime/build.sh), or RUNTIME_DIR. */
export function findRuntimeDll(runtimeDir?: string): string {
  const dir = runtimeDir ?? path.resolve(__dirname, '../../..', 'runtime', 'bin');
  const candidates = [dir, path.resolve(__dirname, '../..', 'runtime', 'bin')];
  for (const d of candidates) {
    const dll = path.join(d, 'EventSourcing.Runtime.dll');
    if (fs.existsSync(dll)) return dll;
  }
  throw new Error(`runtime host not built (looked in ${candidates.join(', ')}): run runtime/build.sh (npm start does)`);
}

/**
 * How a host process is started. Tenant code runs only in `exec` hosts, so those get the
 * process-level fences this machine allows: no network (own network namespace via unshare),
 * rlimits on memory, open files, file size and core dumps (prlimit), a managed-heap cap, and an
 * environment holding nothing of the service's (no DATABASE_URL, no tokens).
 */
export class HostLauncher {
  readonly sandbox: SandboxReport;
  private readonly dotnet: string;

  constructor(
    private readonly dll: string,
    private readonly limits: SandboxLimits,
  ) {
    this.dotnet = fs.realpathSync(spawnSync('sh', ['-c', 'command -v dotnet'], { encoding: 'utf8' }).stdout.trim() || '/usr/bin/dotnet');
    this.sandbox = {
      networkNamespace: works('unshare', ['-n', 'true']),
      rlimits: works('prlimit', ['--nofile=64', 'true']),
    };
  }

  launch(mode: HostMode): HostLaunch {
    const env: Record<string, string> = {
      PATH: '/usr/bin:/bin',
      HOME: '/nonexistent',
      DOTNET_ROOT: path.dirname(this.dotnet),
      DOTNET_CLI_TELEMETRY_OPTOUT: '1',
      DOTNET_NOLOGO: '1',
      // No diagnostics IPC socket in /tmp, no debugger attach.
      DOTNET_EnableDiagnostics: '0',
      DOTNET_gcServer: '0',
      DOTNET_TieredPGO: '0',
    };
    const host = [this.dotnet, this.dll, '--mode', mode];
    if (mode !== 'exec') return { command: host[0], args: host.slice(1), env };

    env.DOTNET_GCHeapHardLimit = '0x' + this.limits.gcHeapBytes.toString(16);
    let argv = host;
    if (this.sandbox.networkNamespace) argv = ['unshare', '-n', ...argv];
    if (this.sandbox.rlimits) {
      // No RLIMIT_FSIZE: CoreCLR's W^X double mapping sizes a memfd, which a zero file-size limit breaks.
      argv = ['prlimit', `--data=${this.limits.dataBytes}`, '--nofile=128', '--core=0', ...argv];
    }
    return { command: argv[0], args: argv.slice(1), env };
  }
}
