using System.Runtime.InteropServices;

namespace EventSourcing.Runtime.Host;

/// <summary>
/// The host's own seccomp filter, installed through Debian's libseccomp after the runtime has started and before
/// any request is read (so before any tenant assembly exists in the process). It is the fence that still holds
/// when tenant code has escaped the IL check: no new programs, processes or sockets, no file opened for writing,
/// no signal or ptrace aimed at another process, no new namespaces or mounts, and none of the kernel interfaces
/// that would bypass or widen the filter (io_uring, bpf, userfaultfd…). Refused calls fail with EPERM (clone3 and
/// openat2 with ENOSYS, so glibc falls back to clone/openat, which are checked on their arguments), so the runtime
/// sees clean errors. The filter covers every thread (TSYNC) and sets no_new_privs. Threads (clone with
/// CLONE_THREAD), the JIT's W^X double mapping (memfd_create + ftruncate + mmap) and reads keep working.
/// </summary>
internal static class Sandbox
{
    // Process-wide on purpose: a seccomp filter is a property of the process (every thread, for good), installed once at
    // start-up before any tenant code is read; these two only report that one fact.
    /// <summary>Whether the filter is in force in this process (reported in the ready line).</summary>
    public static bool Installed { get; private set; }

    /// <summary>Why it is not, when it is not.</summary>
    public static string? Failure { get; private set; }

    const string Lib = "libseccomp.so.2";
    const uint ActAllow = 0x7fff0000;
    const uint ActKillProcess = 0x80000000;
    const uint Eperm = 1, Enosys = 38;
    static uint Errno(uint e) => 0x00050000 | (e & 0xffff);

    // enum scmp_filter_attr
    const int AttrActBadArch = 2, AttrCtlNnp = 3, AttrCtlTsync = 4;

    // enum scmp_compare
    const int CmpNe = 1, CmpMaskedEq = 7;

    // Linux generic values (x86_64 and arm64 alike).
    const ulong OWronly = 0x1, ORdwr = 0x2, OCreat = 0x40, OTrunc = 0x200, OAppend = 0x400;
    const ulong CloneThread = 0x10000;
    static readonly ulong[] CloneNamespaces = { 0x20000 /* NEWNS */, 0x02000000 /* NEWCGROUP */, 0x04000000 /* NEWUTS */,
        0x08000000 /* NEWIPC */, 0x10000000 /* NEWUSER */, 0x20000000 /* NEWPID */, 0x40000000 /* NEWNET */ };

    /// <summary>Refused outright with EPERM. Names unknown on this architecture are skipped.</summary>
    public static readonly string[] Refused =
    {
        // new programs and processes (clone is checked on its flags below)
        "execve", "execveat", "fork", "vfork",
        // network: no socket at all (the service talks to the host over the stdio it was started with)
        "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
        // other processes
        "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "tkill", "kcmp",
        // writing the file system (open/openat are checked on their flags below)
        "creat", "truncate", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
        "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmod", "fchmodat", "chown", "fchown",
        "fchownat", "lchown", "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
        "removexattr", "lremovexattr", "fremovexattr", "open_by_handle_at", "name_to_handle_at",
        // namespaces, mounts, identity
        "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree", "move_mount", "fsopen", "fsconfig",
        "fsmount", "fspick", "mount_setattr", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
        "setfsuid", "setfsgid", "setgroups", "capset",
        // kernel interfaces that would bypass or widen the filter, or reach the machine
        "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "keyctl",
        "add_key", "request_key", "personality", "fanotify_init", "kexec_load", "kexec_file_load", "init_module",
        "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
        "sethostname", "setdomainname", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
        "vhangup", "lookup_dcookie", "uselib", "ustat", "sysfs", "_sysctl", "nfsservctl",
    };

    [StructLayout(LayoutKind.Sequential)]
    struct ArgCmp
    {
        public uint Arg;
        public int Op;
        public ulong DatumA;
        public ulong DatumB;

        public ArgCmp(uint arg, int op, ulong a, ulong b = 0)
        {
            Arg = arg;
            Op = op;
            DatumA = a;
            DatumB = b;
        }
    }

    [DllImport(Lib)] static extern IntPtr seccomp_init(uint defaultAction);
    [DllImport(Lib)] static extern int seccomp_attr_set(IntPtr ctx, int attr, uint value);
    [DllImport(Lib, CharSet = CharSet.Ansi, BestFitMapping = false)] static extern int seccomp_syscall_resolve_name(string name);
    [DllImport(Lib)] static extern int seccomp_rule_add_array(IntPtr ctx, uint action, int syscall, uint argCount, ArgCmp[]? args);
    [DllImport(Lib)] static extern int seccomp_load(IntPtr ctx);
    [DllImport(Lib)] static extern void seccomp_release(IntPtr ctx);

    /// <summary>Installs the filter once; on failure records why and leaves the process unfiltered.</summary>
    public static bool Install()
    {
        if (Installed) return true;
        try
        {
            Build();
            Installed = true;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException)
        {
            Failure = ex is DllNotFoundException ? $"{Lib} not found (install libseccomp2)" : ex.Message;
        }
        return Installed;
    }

    static void Build()
    {
        var ctx = seccomp_init(ActAllow);
        if (ctx == IntPtr.Zero) throw new InvalidOperationException("seccomp_init failed");
        try
        {
            Check(seccomp_attr_set(ctx, AttrCtlNnp, 1), "set no_new_privs");
            // Every thread the runtime already has (finalizer, tiered JIT, signal handler…) gets the filter too.
            Check(seccomp_attr_set(ctx, AttrCtlTsync, 1), "synchronize threads");
            // A call through another ABI (int 0x80 on x86_64) ends the process instead of slipping past the rules.
            Check(seccomp_attr_set(ctx, AttrActBadArch, ActKillProcess), "set bad-arch action");

            foreach (var name in Refused) Add(ctx, Errno(Eperm), name);

            // Threads yes, processes and namespaces no.
            Add(ctx, Errno(Eperm), "clone", new ArgCmp(0, CmpMaskedEq, CloneThread, 0));
            foreach (var ns in CloneNamespaces) Add(ctx, Errno(Eperm), "clone", new ArgCmp(0, CmpMaskedEq, ns, ns));
            // clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes glibc use clone.
            Add(ctx, Errno(Enosys), "clone3");

            // Opens for reading only (any write, create, truncate or append bit refused); openat2's flags are in memory.
            foreach (var bit in new[] { OWronly, ORdwr, OCreat, OTrunc, OAppend })
            {
                Add(ctx, Errno(Eperm), "open", new ArgCmp(1, CmpMaskedEq, bit, bit));
                Add(ctx, Errno(Eperm), "openat", new ArgCmp(2, CmpMaskedEq, bit, bit));
            }
            Add(ctx, Errno(Enosys), "openat2");

            // Signals only to itself (the runtime signals its own threads to suspend them for the GC).
            var self = (ulong)Environment.ProcessId;
            Add(ctx, Errno(Eperm), "kill", new ArgCmp(0, CmpNe, self));
            Add(ctx, Errno(Eperm), "tgkill", new ArgCmp(0, CmpNe, self));
            Add(ctx, Errno(Eperm), "rt_sigqueueinfo", new ArgCmp(0, CmpNe, self));
            Add(ctx, Errno(Eperm), "rt_tgsigqueueinfo", new ArgCmp(0, CmpNe, self));

            Check(seccomp_load(ctx), "load the filter");
        }
        finally
        {
            seccomp_release(ctx);
        }
    }

    static void Add(IntPtr ctx, uint action, string name, params ArgCmp[] args)
    {
        var nr = seccomp_syscall_resolve_name(name);
        if (nr < 0) return; // not a system call of this architecture (e.g. open, fork on arm64)
        Check(seccomp_rule_add_array(ctx, action, nr, (uint)args.Length, args.Length == 0 ? null : args), "add a rule for " + name);
    }

    static void Check(int rc, string what)
    {
        if (rc < 0) throw new InvalidOperationException($"seccomp: cannot {what} (errno {-rc})");
    }
}
