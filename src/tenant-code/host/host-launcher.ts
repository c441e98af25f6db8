import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SandboxOptions } from '../../config/isolation-settings';
import { HostLaunch } from './host-process';
import { HostMode } from './runtime-protocol';
import { Bind, bwrapArgs, DEFAULT_SANDBOX, detectTools, dropArgs, Fences, INSIDE, libraryBinds, SandboxTools } from './sandbox';

export interface HostLimits {
  /** Managed heap cap (DOTNET_GCHeapHardLimit). */
  gcHeapBytes: number;
  /** RLIMIT_DATA: everything the process maps writable, heap and native, with headroom over the GC cap. */
  dataBytes: number;
}

export interface LauncherOptions {
  exec: HostLimits;
  compile: HostLimits;
  sandbox?: SandboxOptions;
}

/** The runtime host build: runtime/bin/ (runtime/build.sh), or RUNTIME_DIR. */
export function findRuntimeDll(runtimeDir?: string): string {
  const dir = runtimeDir ?? path.resolve(__dirname, '../../../..', 'runtime', 'bin');
  const candidates = [dir, path.resolve(__dirname, '../../..', 'runtime', 'bin')];
  for (const d of candidates) {
    const dll = path.join(d, 'EventSourcing.Runtime.dll');
    if (fs.existsSync(dll)) return dll;
  }
  throw new Error(`runtime host not built (looked in ${candidates.join(', ')}): run runtime/build.sh (npm start does)`);
}

/** Which wrappers a launch goes through; narrowed by HostLauncher.degrade() in weak mode. */
interface LaunchPlan {
  bwrap?: string;
  setpriv?: string;
  prlimit?: string;
  unshare?: string;
}

/**
 * How a host process (executor or compiler) is started: through prlimit (RLIMIT_DATA, open files, no
 * core dumps), then bubblewrap (own mount, PID, IPC, UTS and network namespaces; a file system holding
 * only the .NET runtime, the host's build and the shared libraries, all read-only; a fresh /proc; an
 * environment of our choosing), then — when the service is root — setpriv down to an unprivileged
 * uid/gid with no capabilities and no_new_privs, and finally the host, which installs its own seccomp
 * filter before reading any request (required in strict mode: a host that cannot exits with status 4).
 *
 * As root, bwrap needs no user namespace and can bind paths the dropped user could not traverse (a
 * checkout under /root); the uid drop happens inside, before the host starts. As an ordinary user,
 * bwrap's user namespace maps the service's own uid. Either way `child.pid` is bwrap's: killing it
 * kills the host (--die-with-parent; the PID namespace ends with its init).
 */
export class HostLauncher {
  readonly options: Required<LauncherOptions>;
  readonly tools: SandboxTools;
  private plan: LaunchPlan;
  private readonly dotnet: string;
  private readonly libraries: { binds: Bind[]; symlinks: Bind[] };

  constructor(
    readonly dll: string,
    options: LauncherOptions,
  ) {
    this.options = { sandbox: DEFAULT_SANDBOX, ...options };
    this.dotnet = fs.realpathSync(spawnSync('sh', ['-c', 'command -v dotnet'], { encoding: 'utf8' }).stdout.trim() || '/usr/bin/dotnet');
    this.tools = detectTools(this.options.sandbox);
    const { bwrap, setpriv, prlimit, unshare } = this.tools;
    this.plan = { bwrap, setpriv, prlimit, unshare: bwrap ? undefined : unshare };
    const fx = this.framework();
    const natives = [this.dotnet, path.join(fx, 'libcoreclr.so'), path.join(fx, 'libclrjit.so'), path.join(fx, 'libSystem.Native.so')];
    if (setpriv) natives.push(setpriv);
    this.libraries = bwrap ? libraryBinds(natives) : { binds: [], symlinks: [] };
  }

  get mode(): SandboxOptions['mode'] {
    return this.options.sandbox.mode;
  }

  /** The fences a host started now gets, seccomp aside (the host reports that one itself). */
  get staticFences(): Omit<Fences, 'seccomp'> {
    return {
      namespaces: !!this.plan.bwrap,
      network: !!(this.plan.bwrap || this.plan.unshare),
      unprivilegedUser: !this.tools.root || !!this.plan.setpriv,
      rlimits: !!this.plan.prlimit,
    };
  }

  /** Weak mode, when hosts do not start inside the sandbox: fall back to the plain process (+ rlimits, network namespace). */
  degrade(): void {
    this.plan = { prlimit: this.plan.prlimit, unshare: this.tools.unshare };
  }

  /** A launch without bubblewrap or the uid drop: tells a broken sandbox from a broken runtime. */
  bareLaunch(mode: HostMode): HostLaunch {
    const env = this.env(mode, path.dirname(this.dotnet));
    delete env.EVENTSOURCING_SANDBOX;
    return { command: this.dotnet, args: [this.dll, '--mode', mode], env };
  }

  /**
   * `lowPriority` (quarantine executors): the host also sets its own scheduling group's nice to 19
   * (runtime/EventSourcing.Runtime/Host/CpuPriority.cs) — bwrap gives it a session, hence a kernel
   * autogroup, of its own, where the nice value of the chain counts only inside that group.
   */
  launch(mode: HostMode, { lowPriority = false } = {}): HostLaunch {
    const limits = mode === 'exec' ? this.options.exec : this.options.compile;
    const strict = this.mode === 'strict';
    // Only inside bwrap, whose new session is a group of the host's own (outside it, the group is the service's).
    const extra: Record<string, string> = lowPriority && this.plan.bwrap ? { EVENTSOURCING_AUTOGROUP_NICE: '19' } : {};
    let argv: string[];
    let env: Record<string, string>;
    if (this.plan.bwrap) {
      const host = [`${INSIDE.dotnetRoot}/dotnet`, `${INSIDE.runtimeDir}/${path.basename(this.dll)}`, '--mode', mode];
      const command = this.plan.setpriv ? [INSIDE.setpriv, ...dropArgs(this.options.sandbox), '--', ...host] : host;
      const hostEnv = { ...this.env(mode, INSIDE.dotnetRoot), ...extra };
      argv = [
        this.plan.bwrap,
        ...bwrapArgs({ root: this.tools.root, binds: this.binds(mode), symlinks: this.libraries.symlinks, env: hostEnv, command }),
      ];
      env = { PATH: '/usr/bin:/bin' };
    } else {
      env = { ...this.env(mode, path.dirname(this.dotnet)), ...extra };
      argv = [this.dotnet, this.dll, '--mode', mode];
      if (this.plan.setpriv) argv = [this.plan.setpriv, ...dropArgs(this.options.sandbox), '--', ...argv];
      if (this.plan.unshare) argv = [this.plan.unshare, '-n', ...argv];
    }
    // No RLIMIT_FSIZE: CoreCLR's W^X double mapping sizes a memfd, which a zero file-size limit breaks.
    if (this.plan.prlimit) argv = [this.plan.prlimit, `--data=${limits.dataBytes}`, '--nofile=128', '--core=0', ...argv];
    return { command: argv[0], args: argv.slice(1), env, requireSeccomp: strict };
  }

  /** What the host sees: nothing of the service's environment (no DATABASE_URL, no tokens). */
  private env(mode: HostMode, dotnetRoot: string): Record<string, string> {
    const limits = mode === 'exec' ? this.options.exec : this.options.compile;
    const env: Record<string, string> = {
      PATH: '/usr/bin:/bin',
      HOME: '/nonexistent',
      DOTNET_ROOT: dotnetRoot,
      DOTNET_CLI_TELEMETRY_OPTOUT: '1',
      DOTNET_NOLOGO: '1',
      // No diagnostics IPC socket in /tmp, no debugger attach.
      DOTNET_EnableDiagnostics: '0',
      DOTNET_gcServer: '0',
      DOTNET_TieredPGO: '0',
      DOTNET_GCHeapHardLimit: '0x' + limits.gcHeapBytes.toString(16),
    };
    if (this.mode === 'strict') env.EVENTSOURCING_SANDBOX = 'required';
    return env;
  }

  private framework(): string {
    const dir = path.join(path.dirname(this.dotnet), 'shared', 'Microsoft.NETCore.App');
    const versions = fs.existsSync(dir) ? fs.readdirSync(dir).sort((a, b) => a.localeCompare(b, 'en', { numeric: true })) : [];
    return path.join(dir, versions[versions.length - 1] ?? '');
  }

  /**
   * Read-only: the dotnet muxer, hostfxr, the shared framework (and for the compiler its reference
   * pack), the host's build, the libraries.
   */
  private binds(mode: HostMode): Bind[] {
    const root = path.dirname(this.dotnet);
    const parts = ['host/fxr', 'shared/Microsoft.NETCore.App'];
    if (mode !== 'exec') parts.push('packs/Microsoft.NETCore.App.Ref');
    const binds: Bind[] = [{ source: this.dotnet, dest: `${INSIDE.dotnetRoot}/dotnet` }];
    for (const p of parts)
      if (fs.existsSync(path.join(root, p))) binds.push({ source: path.join(root, p), dest: `${INSIDE.dotnetRoot}/${p}` });
    binds.push({ source: path.dirname(this.dll), dest: INSIDE.runtimeDir });
    if (this.plan.setpriv) binds.push({ source: this.plan.setpriv, dest: INSIDE.setpriv });
    return [...this.libraries.binds, ...binds];
  }
}
