import { HostLauncher } from './host-launcher';
import { SandboxRefusedError, verifySandbox } from './sandbox-check';
import { SandboxMode } from '../../config/isolation-settings';
import { SandboxTools } from './sandbox';

/** Host stand-ins (real processes, sh): what a host writes at start, or how it fails. */
const READY = (seccomp: boolean) =>
  `printf '{"id":0,"type":"ready","payload":{"pid":2,"mode":"exec","protocolVersion":1,"seccomp":${seccomp}}}\\n'; cat >/dev/null`;
const NO_SECCOMP = `echo "[runtime] sandbox required but the seccomp filter could not be installed: libseccomp.so.2 not found (install libseccomp2)" >&2; exit 4`;
const BROKEN = `echo "realpath(/runtime/EventSourcing.Runtime.dll) failed: Permission denied" >&2; exit 155`;

const ALL: SandboxTools = {
  root: true,
  bwrap: '/usr/bin/bwrap',
  setpriv: '/usr/bin/setpriv',
  prlimit: '/usr/bin/prlimit',
  unshare: '/usr/bin/unshare',
};
let n = 0;

function fake(mode: SandboxMode, tools: SandboxTools, sandboxed: string, bare: string) {
  let degraded = false;
  const sh = (script: string) => ({ command: 'sh', args: ['-c', script], env: { PATH: '/usr/bin:/bin' } });
  const launcher = {
    dll: `/fake/${n++}/EventSourcing.Runtime.dll`,
    options: { sandbox: { mode, uid: 61000, gid: 61000, bwrap: 'bwrap' } },
    tools,
    mode,
    get staticFences() {
      const bwrap = !!tools.bwrap && !degraded;
      return {
        namespaces: bwrap,
        network: bwrap || !!tools.unshare,
        unprivilegedUser: !tools.root || (!!tools.setpriv && !degraded),
        rlimits: !!tools.prlimit,
      };
    },
    launch: () => sh(degraded ? bare : sandboxed),
    bareLaunch: () => sh(bare),
    degrade: () => (degraded = true),
  };
  return launcher as unknown as HostLauncher & { readonly staticFences: Record<string, boolean> };
}

const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SandboxRefusedError);
  return e as SandboxRefusedError;
};

describe('the sandbox check at start', () => {
  it('passes in strict mode when every fence is there and the host reports its filter', async () => {
    const status = await verifySandbox(fake('strict', ALL, READY(true), READY(true)));
    expect(status).toEqual({
      mode: 'strict',
      fences: { namespaces: true, network: true, unprivilegedUser: true, seccomp: true, rlimits: true },
      missing: {},
    });
  });

  it('strict: refuses (exit 2) when the host cannot install its filter, saying what to install', async () => {
    const e = await refusal(verifySandbox(fake('strict', ALL, NO_SECCOMP, READY(false))));
    expect(e.exitCode).toBe(2);
    expect(Object.keys(e.missing)).toEqual(['seccomp']);
    expect(e.message).toMatch(/seccomp: .*libseccomp\.so\.2 not found/);
    expect(e.message).toMatch(/apt-get install libseccomp2/);
  });

  it('strict: names every missing fence together', async () => {
    const e = await refusal(verifySandbox(fake('strict', { root: true, setpriv: '/usr/bin/setpriv' }, READY(true), READY(true))));
    expect(Object.keys(e.missing).sort()).toEqual(['namespaces', 'network', 'rlimits']);
    expect(e.message).toMatch(/apt-get install bubblewrap/);
  });

  it('strict: refuses when hosts start bare but not inside the sandbox (the dropped user cannot read the runtime)', async () => {
    const e = await refusal(verifySandbox(fake('strict', ALL, BROKEN, READY(true))));
    expect(Object.keys(e.missing)).toEqual(['unprivilegedUser']);
    expect(e.message).toMatch(/do not start inside the sandbox.*Permission denied/);
  });

  it('weak: falls back to plain processes when hosts do not start inside the sandbox, and reports what is missing', async () => {
    const launcher = fake('weak', ALL, BROKEN, READY(true));
    const status = await verifySandbox(launcher);
    expect(status.mode).toBe('weak');
    expect(status.fences).toEqual({ namespaces: false, network: true, unprivilegedUser: false, seccomp: true, rlimits: true });
    expect(Object.keys(status.missing).sort()).toEqual(['namespaces', 'unprivilegedUser']);
    expect(launcher.launch('exec').args[1]).toBe(READY(true));
  });

  it('weak: reports a host without its filter', async () => {
    const status = await verifySandbox(fake('weak', ALL, READY(false), READY(false)));
    expect(status.fences.seccomp).toBe(false);
    expect(status.missing).toEqual({ seccomp: 'the host reported no seccomp filter' });
  });

  it('does not hold the service back for a runtime that does not start at all (a broken build answers 503 later)', async () => {
    const status = await verifySandbox(fake('strict', ALL, BROKEN, BROKEN));
    expect(status.fences).toMatchObject({ namespaces: true, seccomp: false });
    expect(status.runtimeError).toMatch(/Permission denied/);
  });
});
