import { HostLauncher } from './host-launcher';
import { HostLaunch, HostProcess, HostReady } from './host-process';
import { SandboxMode } from '../../config/isolation-settings';
import { Fence, FENCE_REMEDIES, FENCES, Fences } from './sandbox';

/** What GET /health/ready reports, and what the start-up check found. */
export interface SandboxStatus {
  mode: SandboxMode;
  fences: Fences;
  /** Why each missing fence is missing (weak mode runs without them). */
  missing: Partial<Record<Fence, string>>;
  /** The runtime host does not start at all, sandbox or not (a broken build): not a fence question. */
  runtimeError?: string;
}

export const SANDBOX_STATUS = Symbol('SANDBOX_STATUS');

/** Start-up refusal in strict mode: main.ts exits with this status. */
export class SandboxRefusedError extends Error {
  readonly exitCode = 2;
  constructor(readonly missing: Partial<Record<Fence, string>>) {
    super(
      'refusing to start: the runtime sandbox is missing fences (set RUNTIME_SANDBOX=weak to run without them, at your own risk):\n' +
        Object.entries(missing)
          .map(([fence, why]) => `  - ${fence}: ${why}\n    fix: ${FENCE_REMEDIES[fence as Fence]}`)
          .join('\n'),
    );
    this.name = 'SandboxRefusedError';
  }
}

const SECCOMP_REFUSAL = 'seccomp filter could not be installed';

type Attempt = { ready: HostReady; error?: undefined } | { ready?: undefined; error: string };

async function attempt(launch: HostLaunch, readyTimeoutMs: number): Promise<Attempt> {
  try {
    const host = await HostProcess.start({ mode: 'exec', label: 'sandbox check', launch, readyTimeoutMs, maxLineBytes: 1 << 20 });
    const ready = host.ready!;
    await host.close();
    return { ready };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

interface Outcome {
  seccomp: boolean;
  seccompError?: string;
  /** Hosts start bare but not inside bwrap / under the dropped uid. */
  sandboxError?: string;
  runtimeError?: string;
}

// The machine does not change while the process lives: services started in one process (tests) check once.
const outcomes = new Map<string, Promise<Outcome>>();

/** Starts one executor host as production would and reads what its ready line reports. */
async function probe(launcher: HostLauncher, readyTimeoutMs: number): Promise<Outcome> {
  const sandboxed = await attempt(launcher.launch('exec'), readyTimeoutMs);
  if (sandboxed.ready) return { seccomp: sandboxed.ready.seccomp === true };
  if (sandboxed.error.includes(SECCOMP_REFUSAL)) return { seccomp: false, seccompError: lastLine(sandboxed.error, SECCOMP_REFUSAL) };
  const bare = await attempt(launcher.bareLaunch('exec'), readyTimeoutMs);
  if (!bare.ready) return { seccomp: false, runtimeError: sandboxed.error };
  return { seccomp: bare.ready.seccomp === true, sandboxError: sandboxed.error };
}

function lastLine(text: string, containing: string): string {
  return (
    text
      .split('\n')
      .find((l) => l.includes(containing))
      ?.trim() ?? text.split('\n')[0]
  );
}

/**
 * Checks every fence at start. Strict: any missing fence refuses the start (SandboxRefusedError), so the
 * service never runs tenant code less fenced than configured. Weak: runs with what it has (hosts that do not
 * start inside the sandbox fall back to plain processes) and reports the missing fences.
 */
export async function verifySandbox(launcher: HostLauncher, readyTimeoutMs = 30_000): Promise<SandboxStatus> {
  const key = JSON.stringify([launcher.dll, launcher.options, launcher.tools]);
  let pending = outcomes.get(key);
  if (!pending) outcomes.set(key, (pending = probe(launcher, readyTimeoutMs)));
  const outcome = await pending;

  const missing: Partial<Record<Fence, string>> = {};
  if (outcome.sandboxError) {
    const why = `runtime hosts do not start inside the sandbox (the sandbox user must be able to read RUNTIME_DIR and the .NET runtime): ${firstLines(outcome.sandboxError)}`;
    // As root the likely cause is the dropped user's (it must read what is bound), else bwrap itself.
    if (launcher.tools.root && launcher.tools.setpriv) missing.unprivilegedUser = why;
    else missing.namespaces = why;
    if (launcher.mode === 'weak') launcher.degrade();
  }
  const fences: Fences = { ...launcher.staticFences, seccomp: outcome.seccomp };
  const tools = launcher.tools;
  const absent: Record<Fence, string> = {
    namespaces: tools.bwrap
      ? 'not used (hosts fell back to plain processes)'
      : `bubblewrap (${launcher.options.sandbox.bwrap}) is missing or cannot create namespaces here`,
    network: 'no bubblewrap, and unshare -n is not permitted',
    unprivilegedUser: 'setpriv is missing or cannot switch to the sandbox uid/gid',
    seccomp:
      outcome.seccompError ??
      (outcome.runtimeError ? 'not verified: the runtime host does not start' : 'the host reported no seccomp filter'),
    rlimits: 'prlimit is missing or not permitted',
  };
  for (const f of FENCES) if (!fences[f] && !missing[f]) missing[f] = absent[f];

  // A host that does not start at all is a broken build, not a missing fence: every host still has to
  // install the filter to be used, so strict mode does not hold the service back for it.
  const refusing = { ...missing };
  if (outcome.runtimeError) delete refusing.seccomp;
  if (launcher.mode === 'strict' && Object.keys(refusing).length) throw new SandboxRefusedError(refusing);
  return { mode: launcher.mode, fences, missing, runtimeError: outcome.runtimeError && firstLines(outcome.runtimeError) };
}

function firstLines(text: string): string {
  return text.split('\n').filter(Boolean).slice(0, 4).join(' | ').slice(0, 600);
}
