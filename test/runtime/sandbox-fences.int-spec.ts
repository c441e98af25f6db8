import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { HostLauncher } from '../../src/tenant-code/host/host-launcher';
import { HostCallError, HostProcess } from '../../src/tenant-code/host/host-process';
import { HostMode } from '../../src/tenant-code/host/runtime-protocol';
import { createLauncher } from '../../src/tenant-code/sandboxed-launcher';
import { SandboxStatus } from '../../src/tenant-code/host/sandbox-check';
import { dotnetProcessUnder } from '../support/host-processes';
import { ADMIN_TOKEN, ServiceProcess } from '../support/service-harness';
import { REPO } from '../support/runtime-harness';
import { elapse } from '../support/wait';

/**
 * The operating-system fences, proven from inside. The test-only probe build (runtime/bin-probe, built by
 * `npm test`) stands in for tenant code that has already escaped the IL check: started through the
 * production launcher (createLauncher, with its start-up check) in exec and in compile mode, after the
 * host's seccomp filter is in place, it tries to reach a real running service — its data directory, its
 * environment (ADMIN_TOKEN), its process and port — and the machine. Every attempt must fail, each is
 * asserted on its own, and harmless controls must work, so that a refusal means something.
 */
jest.setTimeout(120_000);

const EPERM = 1;
const ENOSYS = 38;
const PROBE_DIR = path.join(REPO, 'runtime', 'bin-probe');
const ROOT = process.getuid!() === 0;
// Something only the test process's own environment holds: it must not show inside either.
const CANARY = `sandbox-canary-${process.pid}-${Date.now()}`;

type Attempt = { ok: boolean; output?: string; errno?: number; error?: string };
let service: ServiceProcess;
let dataDir: string;
let servicePort: number;
let launcher: HostLauncher;
let status: SandboxStatus;

beforeAll(async () => {
  if (!fs.existsSync(path.join(PROBE_DIR, 'EventSourcing.Runtime.dll'))) {
    throw new Error(`${PROBE_DIR} missing: run 'bash scripts/build-runtime.sh --probe' (npm test does)`);
  }
  process.env.SANDBOX_TEST_CANARY = CANARY;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-fences-'));
  fs.writeFileSync(path.join(dataDir, 'secret.txt'), CANARY);
  service = new ServiceProcess({ DATA_DIR: dataDir });
  await service.start();
  servicePort = Number(new URL(service.url).port);
  ({ launcher, status } = await createLauncher(loadConfig({ RUNTIME_DIR: PROBE_DIR, DATA_DIR: dataDir })));
});

afterAll(async () => {
  await service?.kill('SIGTERM');
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function probe(mode: HostMode): Promise<Record<string, Attempt>> {
  const host = await HostProcess.start({
    mode,
    label: `probe-${mode}`,
    launch: launcher.launch(mode),
    readyTimeoutMs: 30_000,
    maxLineBytes: 64 << 20,
  });
  try {
    expect(host.ready).toMatchObject({ mode, seccomp: true, pid: 2 });
    const payload = { dataDir, dataFile: path.join(dataDir, 'events.sqlite'), repoDir: REPO, servicePid: service.child.pid, servicePort };
    const r = await host.call('probe' as 'ping', payload as never, 60_000);
    return (r as unknown as { attempts: Record<string, Attempt> }).attempts;
  } finally {
    await host.close();
  }
}

it('starts with every fence in place (strict)', () => {
  expect(status).toMatchObject({
    mode: 'strict',
    fences: { namespaces: true, network: true, unprivilegedUser: true, seccomp: true, rlimits: true },
  });
  expect(status.missing).toEqual({});
  expect(fs.existsSync(path.join(dataDir, 'events.sqlite'))).toBe(true);
});

describe.each(['exec', 'compile'] as const)('from inside a %s host', (mode) => {
  let a: Record<string, Attempt>;
  beforeAll(async () => {
    a = await probe(mode);
  });

  const refused = (name: string, errno?: number) => {
    expect(a[name]).toBeDefined();
    expect({ name, ok: a[name].ok }).toEqual({ name, ok: false });
    if (errno !== undefined) expect({ name, errno: a[name].errno }).toEqual({ name, errno });
  };

  describe('controls (the probe runs, and the runtime keeps what it needs)', () => {
    it('reads its own assembly, at the sandbox path', () => {
      expect(a.readOwnAssembly).toMatchObject({ ok: true, output: expect.stringContaining('/runtime/EventSourcing.Runtime.dll') });
    });
    it('signals itself, starts a thread, sizes a memfd (the JIT’s W^X mapping)', () => {
      expect(a.signalItself.ok).toBe(true);
      expect(a.startThread).toMatchObject({ ok: true, output: 'ran' });
      expect(a.memfdForTheJit.ok).toBe(true);
    });
  });

  describe('the service’s files', () => {
    it('sees a root holding only the runtime', () => {
      const entries = a.listRoot.output!.split(',');
      expect(entries).toEqual(expect.arrayContaining(['/dotnet', '/runtime', '/proc', '/dev', '/usr']));
      for (const e of entries) expect(['/dotnet', '/runtime', '/proc', '/dev', '/usr', '/lib', '/lib64', '/lib32', '/libx32']).toContain(e);
    });
    it('cannot read DATA_DIR or a file in it', () => {
      refused('readDataFile');
      refused('listDataDir');
    });
    it('cannot list the repository, /etc, /home or /root', () => {
      refused('listRepoDir');
      refused('readEtcPasswd');
      refused('listHome');
      refused('listRootHome');
    });
    it('cannot write: /tmp, the runtime dir, DATA_DIR', () => {
      refused('writeTmp');
      refused('writeRuntimeDir');
      refused('writeDataDir');
    });
    it('cannot open for writing, create, remove, rename, link or chmod (seccomp: EPERM before any path lookup)', () => {
      for (const n of [
        'openDataFileForWriting',
        'openOwnAssemblyForWriting',
        'createFileInRoot',
        'mkdir',
        'unlink',
        'rename',
        'symlink',
        'chmod',
      ])
        refused(n, EPERM);
    });
  });

  describe('secrets and other processes', () => {
    it('sees no process but its own sandbox (pid 1: bwrap’s init, pid 2: itself)', () => {
      expect(a.visibleProcesses.output!.split(',').sort()).toEqual(['1', '2']);
    });
    it('cannot read the service’s environment or command line', () => {
      refused('readServiceEnviron');
      refused('readServiceCmdline');
    });
    it('finds ADMIN_TOKEN, the canary and no database URL in no environment or command line it can read', () => {
      const everything = [a.readEveryVisibleEnviron.output, a.readPid1Environ.output, a.readPid1Cmdline.output, a.ownStatus.output].join(
        '\n',
      );
      expect(a.readEveryVisibleEnviron.ok).toBe(true);
      for (const secret of [ADMIN_TOKEN, 'ADMIN_TOKEN', CANARY, 'DATABASE_URL', dataDir]) expect(everything).not.toContain(secret);
      if (ROOT) refused('readPid1Environ'); // bwrap's init is root's, the host is not
    });
    it('cannot signal the service, pid 1 or everyone', () => {
      refused('signalService', EPERM);
      refused('signalPid1', EPERM);
      refused('signalEveryone', EPERM);
    });
    it('cannot ptrace or read another process’s memory', () => {
      refused('ptraceAttachPid1', EPERM);
      refused('processVmReadv', EPERM);
    });
  });

  describe('programs, processes, network', () => {
    it('cannot exec a shell (/bin/sh -c id): there is none, and no program may start', () => {
      refused('execShell'); // ENOENT: no /bin/sh in the sandbox
      refused('startRuntimeProcess', EPERM); // Process.Start of a program that is there: fork refused
      refused('execveRuntime', EPERM); // execve of it in place: refused
    });
    it('cannot fork; clone3 answers ENOSYS (glibc falls back to clone, checked on its flags)', () => {
      refused('fork', EPERM);
      refused('clone3', ENOSYS);
    });
    it('cannot open a TCP or UNIX socket, a socket pair, or connect to the service', () => {
      refused('tcpSocket');
      refused('connectToService');
      refused('unixSocket', EPERM);
      refused('socketpair', EPERM);
    });
    it('has no network interface but loopback (its own network namespace)', () => {
      expect(a.networkInterfaces).toMatchObject({ ok: true, output: 'lo' });
    });
  });

  describe('identity and the kernel', () => {
    it('runs unprivileged: not root outside when the service is root, no capabilities, no_new_privs, filtered', () => {
      const st = a.ownStatus.output!;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(st)![1]);
      if (ROOT) expect(uid).toBe(61000);
      else expect(uid).toBe(process.getuid!());
      expect(st).toMatch(/^CapEff:\s+0+$/m);
      expect(st).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(st).toMatch(/^Seccomp:\s+2$/m);
    });
    it('has the filter on every thread (installed with TSYNC)', () => {
      const threads = a.threadsSeccomp.output!.split(',');
      expect(threads.length).toBeGreaterThan(3);
      for (const t of threads) expect(t).toMatch(/:2$/);
    });
    it('cannot io_uring, unshare, mount, setuid(0), bpf, perf_event_open, userfaultfd, keyctl, personality', () => {
      for (const n of [
        'ioUringSetup',
        'unshareUserNamespace',
        'mountTmpfs',
        'setuidRoot',
        'bpf',
        'perfEventOpen',
        'userfaultfd',
        'keyctl',
        'personality',
      ])
        refused(n, EPERM);
    });
  });
});

describe('killing a host', () => {
  it.each(['exec', 'compile'] as const)(
    '%s: a deadline’s kill (SIGKILL to the pid Node holds, bwrap’s) ends the host inside',
    async (mode) => {
      const host = await HostProcess.start({
        mode,
        label: 'kill',
        launch: launcher.launch(mode),
        readyTimeoutMs: 30_000,
        maxLineBytes: 1 << 20,
      });
      const inner = dotnetProcessUnder(host.pid!)!;
      expect(inner).toBeDefined();
      expect(inner).not.toBe(host.pid);
      const pending = host.call('ping', {}, 10_000).catch(() => 'dead');
      host.kill('TIMEOUT', 'deadline');
      await pending;
      const gone = async () => {
        for (let i = 0; i < 50; i++) {
          try {
            if (/^State:\s+Z/m.test(fs.readFileSync(`/proc/${inner}/status`, 'utf8'))) return true; // dead, not yet reaped
          } catch {
            return true; // gone
          }
          await elapse(100, 'poll interval');
        }
        return false;
      };
      expect(await gone()).toBe(true);
    },
  );
});

describe('the production build', () => {
  it('does not contain the probe, which only the test build does', () => {
    const marker = Buffer.from('SandboxProbe');
    expect(fs.readFileSync(path.join(PROBE_DIR, 'EventSourcing.Runtime.dll')).includes(marker)).toBe(true);
    expect(fs.readFileSync(path.join(REPO, 'runtime', 'bin', 'EventSourcing.Runtime.dll')).includes(marker)).toBe(false);
  });

  it('answers a probe request UNKNOWN_TYPE', async () => {
    const prod = new HostLauncher(path.join(REPO, 'runtime', 'bin', 'EventSourcing.Runtime.dll'), launcher.options);
    const host = await HostProcess.start({
      mode: 'exec',
      label: 'prod',
      launch: prod.launch('exec'),
      readyTimeoutMs: 30_000,
      maxLineBytes: 1 << 20,
    });
    try {
      await expect(host.call('probe' as 'ping', {} as never, 10_000)).rejects.toMatchObject({
        failure: 'UNKNOWN_TYPE',
      } satisfies Partial<HostCallError>);
    } finally {
      await host.close();
    }
  });
});
