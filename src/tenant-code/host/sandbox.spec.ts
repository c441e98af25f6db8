import { bwrapArgs, dropArgs, unshareArgs } from './sandbox';

describe('the sandbox command', () => {
  const plan = {
    root: true,
    binds: [
      { source: '/usr/lib/x86_64-linux-gnu', dest: '/usr/lib/x86_64-linux-gnu' },
      { source: '/opt/dotnet/dotnet', dest: '/dotnet/dotnet' },
      { source: '/srv/app/runtime/bin', dest: '/runtime' },
    ],
    symlinks: [{ source: 'usr/lib', dest: '/lib' }],
    env: { DOTNET_ROOT: '/dotnet', SECRET_FREE: '1' },
    command: ['/usr/bin/setpriv', ...dropArgs({ uid: 61000, gid: 61000 }), '--', '/dotnet/dotnet', '/runtime/EventSourcing.Runtime.dll'],
  };
  const args = bwrapArgs(plan);
  const at = (flag: string, value: string) => args.findIndex((a, i) => a === flag && args[i + 1] === value);

  it('creates every namespace, as root without a user namespace, else with one', () => {
    expect(unshareArgs(true)).toEqual(['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try']);
    expect(unshareArgs(false)[0]).toBe('--unshare-user');
    expect(args.slice(0, 5)).toEqual(unshareArgs(true));
    expect(args).toEqual(expect.arrayContaining(['--die-with-parent', '--new-session']));
  });

  it('makes the directories leading to the binds 0755 before binding (root would get 0700)', () => {
    for (const d of ['/usr', '/usr/lib', '/dotnet']) {
      const i = at('--dir', d);
      expect(i).toBeGreaterThan(0);
      expect(args.slice(i - 2, i)).toEqual(['--perms', '0755']);
      expect(i).toBeLessThan(at('--ro-bind', plan.binds[0].source));
    }
    expect(at('--dir', '/')).toBe(-1);
  });

  it('binds read-only only what it is given, then a fresh /proc and /dev, and makes / read-only', () => {
    expect(args.filter((a) => a === '--bind' || a === '--dev-bind')).toEqual([]);
    expect(args.filter((a) => a === '--ro-bind')).toHaveLength(3);
    expect(at('--ro-bind', '/srv/app/runtime/bin')).toBeGreaterThan(0);
    expect(args[at('--ro-bind', '/srv/app/runtime/bin') + 2]).toBe('/runtime');
    expect(at('--proc', '/proc')).toBeGreaterThan(at('--ro-bind', '/srv/app/runtime/bin'));
    expect(at('--remount-ro', '/')).toBeGreaterThan(at('--dev', '/dev'));
  });

  it('clears the environment and sets exactly the given one, then runs the command after --', () => {
    const clear = args.indexOf('--clearenv');
    expect(clear).toBeGreaterThan(0);
    expect(args.filter((a) => a === '--setenv')).toHaveLength(2);
    expect(at('--setenv', 'DOTNET_ROOT')).toBeGreaterThan(clear);
    expect(args.slice(args.indexOf('--') + 1)).toEqual(plan.command);
  });

  it('drops to the uid/gid with no groups, no capabilities and no_new_privs', () => {
    expect(dropArgs({ uid: 61000, gid: 61001 })).toEqual([
      '--reuid=61000',
      '--regid=61001',
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
    ]);
  });
});
