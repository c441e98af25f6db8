import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SandboxOptions } from '../../config/isolation-settings';

/**
 * The operating-system fences around runtime hosts (executors and the compiler), each standing on its
 * own should the IL check fail:
 * - namespaces: bubblewrap gives the host its own mount, PID, IPC and UTS namespaces: a file system
 *   holding only the .NET runtime and the host's build (read-only), a fresh /proc of its own, a minimal /dev;
 * - network: its own network namespace (no interface but a down loopback);
 * - unprivilegedUser: it runs as RUNTIME_SANDBOX_UID/GID, not as root, with no capabilities;
 * - seccomp: the host's own filter (no exec, fork, sockets, writes, signals to others…), reported in its ready line;
 * - rlimits: RLIMIT_DATA, open files, no core dumps.
 */
export const FENCES = ['namespaces', 'network', 'unprivilegedUser', 'seccomp', 'rlimits'] as const;
export type Fence = (typeof FENCES)[number];
export type Fences = Record<Fence, boolean>;

export const DEFAULT_SANDBOX: SandboxOptions = { mode: 'strict', uid: 61000, gid: 61000, bwrap: 'bwrap' };

/** What to install or set when a fence is missing (the refusal and the warning name it). */
export const FENCE_REMEDIES: Record<Fence, string> = {
  namespaces:
    'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap); a service not running as root also needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, no AppArmor userns restriction); in a container, allow namespaces (e.g. --security-opt seccomp=unconfined --cap-add SYS_ADMIN)',
  network: 'as for namespaces: bubblewrap (or, without it, unshare from util-linux with permission to create a network namespace)',
  unprivilegedUser:
    'the service runs as root: setpriv (util-linux) must be able to switch to RUNTIME_SANDBOX_UID/RUNTIME_SANDBOX_GID, and that user must be able to read RUNTIME_DIR and the .NET runtime; or run the service as an ordinary user',
  seccomp: 'install libseccomp2 (Debian/Ubuntu: apt-get install libseccomp2) on a kernel with seccomp filters (CONFIG_SECCOMP_FILTER)',
  rlimits: 'install util-linux (prlimit)',
};

/** The helpers found on this machine that work here, as the service's user. */
export interface SandboxTools {
  root: boolean;
  bwrap?: string;
  /** Only looked for when root: the drop to uid/gid works. */
  setpriv?: string;
  prlimit?: string;
  /** Fallback network fence without bubblewrap. */
  unshare?: string;
}

function which(cmd: string): string | undefined {
  if (cmd.includes('/')) return fs.existsSync(cmd) ? path.resolve(cmd) : undefined;
  for (const dir of (process.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(':')) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.realpathSync(p);
    } catch {
      /* next */
    }
  }
  return undefined;
}

function runs(cmd: string, args: string[]): boolean {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000, env: { PATH: '/usr/bin:/bin' } }).status === 0;
  } catch {
    return false;
  }
}

/** The namespaces bwrap creates; as root no user namespace is needed (the uid drop happens inside). */
export function unshareArgs(root: boolean): string[] {
  const ns = ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try'];
  return root ? ns : ['--unshare-user', ...ns];
}

/** Each helper is tried for real (a namespace created, a uid dropped), not just looked up. */
export function detectTools(options: SandboxOptions): SandboxTools {
  const root = process.getuid?.() === 0;
  const truePath = which('true') ?? '/bin/true';
  const tools: SandboxTools = { root };
  const prlimit = which('prlimit');
  if (prlimit && runs(prlimit, ['--nofile=64', '--core=0', truePath])) tools.prlimit = prlimit;
  if (root) {
    const setpriv = which('setpriv');
    if (setpriv && runs(setpriv, [...dropArgs(options), '--', truePath])) tools.setpriv = setpriv;
  }
  const bwrap = which(options.bwrap);
  if (bwrap && runs(bwrap, [...unshareArgs(root), '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--', truePath]))
    tools.bwrap = bwrap;
  const unshare = which('unshare');
  if (unshare && runs(unshare, ['-n', truePath])) tools.unshare = unshare;
  return tools;
}

/** setpriv's arguments: a fixed uid/gid, no supplementary groups, no capabilities, no way back up. */
export function dropArgs(options: Pick<SandboxOptions, 'uid' | 'gid'>): string[] {
  return [`--reuid=${options.uid}`, `--regid=${options.gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'];
}

/** Where the sandboxed host finds things: fixed paths, so nothing of the service's layout shows inside. */
export const INSIDE = { dotnetRoot: '/dotnet', runtimeDir: '/runtime', setpriv: '/usr/bin/setpriv' } as const;

export interface Bind {
  source: string;
  dest: string;
}

/**
 * The shared libraries the .NET runtime loads, found with ldd on the runtime's own native parts: the
 * directories holding them (realpaths) and the dynamic loader's directory. On Debian this is
 * /usr/lib/<multiarch> (libc, libstdc++, libssl for SHA-256, libseccomp) and /usr/lib64 (the loader link);
 * /lib and /lib64 are then the usual merged-/usr symlinks. No /etc is needed: without ld.so.cache the
 * loader searches its built-in directories, which are these.
 */
export function libraryBinds(natives: string[]): { binds: Bind[]; symlinks: Bind[] } {
  const dirs = new Set<string>();
  for (const file of natives.filter((f) => fs.existsSync(f))) {
    const out = spawnSync('ldd', [file], { encoding: 'utf8', timeout: 10_000 });
    if (out.status !== 0) continue;
    for (const line of out.stdout.split('\n')) {
      const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
      if (!m) continue;
      dirs.add(fs.realpathSync(path.dirname(m[1])));
      dirs.add(path.dirname(fs.realpathSync(m[1])));
    }
  }
  if (dirs.size === 0) {
    // No ldd: the distribution's library directories as a whole.
    for (const d of ['/usr/lib', '/usr/lib64', '/lib', '/lib64']) if (fs.existsSync(d) && !fs.lstatSync(d).isSymbolicLink()) dirs.add(d);
  }
  // Only the outermost of nested directories is bound.
  const sorted = [...dirs].sort();
  const outer = sorted.filter((d) => !sorted.some((o) => o !== d && d.startsWith(o + '/')));
  const symlinks = fs
    .readdirSync('/')
    .filter((n) => /^lib/.test(n) && fs.lstatSync('/' + n).isSymbolicLink())
    .map((n) => ({ source: fs.readlinkSync('/' + n), dest: '/' + n }));
  return { binds: outer.map((d) => ({ source: d, dest: d })), symlinks };
}

export interface BwrapPlan {
  root: boolean;
  binds: Bind[];
  symlinks: Bind[];
  env: Record<string, string>;
  command: string[];
}

/**
 * bubblewrap's arguments: new namespaces, the read-only binds, a fresh /proc and minimal /dev, the root
 * made read-only, an environment of exactly `env`, then the command. Directories leading to the binds are
 * created 0755 first (bwrap would make them 0700 when run as root, unreadable after the uid drop).
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = [...unshareArgs(plan.root), '--die-with-parent', '--new-session', '--hostname', 'sandbox'];
  const parents = new Set<string>();
  for (const b of plan.binds) for (let d = path.dirname(b.dest); d !== '/'; d = path.dirname(d)) parents.add(d);
  for (const d of [...parents].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b))) {
    args.push('--perms', '0755', '--dir', d);
  }
  for (const s of plan.symlinks) args.push('--symlink', s.source, s.dest);
  for (const b of plan.binds) args.push('--ro-bind', b.source, b.dest);
  args.push('--proc', '/proc', '--dev', '/dev', '--remount-ro', '/', '--chdir', '/', '--clearenv');
  for (const [k, v] of Object.entries(plan.env)) args.push('--setenv', k, v);
  return [...args, '--', ...plan.command];
}
