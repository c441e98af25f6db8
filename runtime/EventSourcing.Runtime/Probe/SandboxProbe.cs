using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;

namespace EventSourcing.Runtime.Probe;

/// <summary>
/// TEST-ONLY (this folder is compiled only with -p:SandboxProbe=true, into runtime/bin-probe, never into runtime/bin; see the csproj): stands in for
/// tenant code that has already escaped the IL check. Served as the <c>probe</c> request in every mode, so it runs in
/// a host started exactly like production ones, after the seccomp filter is in place. Each attempt reports whether
/// it succeeded and, if not, the errno or exception; test/runtime/sandbox-fences.int-spec.ts judges them.
/// </summary>
internal static class SandboxProbe
{
    const string Libc = "libc.so.6";
    [DllImport(Libc, SetLastError = true)] static extern int kill(int pid, int sig);
    [DllImport(Libc, SetLastError = true)] static extern int fork();
    [DllImport(Libc)] static extern void _exit(int status);
    [DllImport(Libc, SetLastError = true)] static extern int execve(string path, string?[] argv, string?[] envp);
    [DllImport(Libc, SetLastError = true)] static extern int socket(int domain, int type, int protocol);
    [DllImport(Libc, SetLastError = true)] static extern int socketpair(int domain, int type, int protocol, int[] sv);
    [DllImport(Libc, SetLastError = true)] static extern int open(string path, int flags, int mode);
    [DllImport(Libc, SetLastError = true)] static extern int close(int fd);
    [DllImport(Libc, SetLastError = true)] static extern int mkdir(string path, int mode);
    [DllImport(Libc, SetLastError = true)] static extern int unlink(string path);
    [DllImport(Libc, SetLastError = true)] static extern int rename(string from, string to);
    [DllImport(Libc, SetLastError = true)] static extern int symlink(string target, string path);
    [DllImport(Libc, SetLastError = true)] static extern int chmod(string path, int mode);
    [DllImport(Libc, SetLastError = true)] static extern int setuid(int uid);
    [DllImport(Libc, SetLastError = true)] static extern int unshare(int flags);
    [DllImport(Libc, SetLastError = true)] static extern int mount(string source, string target, string type, ulong flags, IntPtr data);
    [DllImport(Libc, SetLastError = true)] static extern int memfd_create(string name, uint flags);
    [DllImport(Libc, SetLastError = true)] static extern int ftruncate(int fd, long length);
    [DllImport(Libc, SetLastError = true)] static extern long syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6);
    [DllImport("libseccomp.so.2")] static extern int seccomp_syscall_resolve_name(string name);

    const int OWronly = 1, ORdwr = 2, OCreat = 0x40;

    public static void Run(JsonElement payload, Utf8JsonWriter w)
    {
        string Arg(string name) => payload.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString()! : "";
        var dataDir = Arg("dataDir");
        var dataFile = Arg("dataFile");
        var repoDir = Arg("repoDir");
        var servicePid = payload.TryGetProperty("servicePid", out var sp) ? sp.GetInt32() : 0;
        var servicePort = payload.TryGetProperty("servicePort", out var port) ? port.GetInt32() : 0;
        var ownDll = typeof(SandboxProbe).Assembly.Location;
        var self = Environment.ProcessId;

        w.WritePropertyName("attempts"u8);
        w.WriteStartObject();

        // Controls: what must keep working, so that a refusal below means something.
        Try(w, "readOwnAssembly", () => $"{File.ReadAllBytes(ownDll).Length} bytes of {ownDll}");
        Try(w, "signalItself", () => Native(kill(self, 0)));
        Try(w, "startThread", () =>
        {
            var ran = false;
            var t = new Thread(() => ran = true);
            t.Start();
            t.Join();
            return ran ? "ran" : throw new InvalidOperationException("thread did not run");
        });
        Try(w, "memfdForTheJit", () =>
        {
            var fd = Native(memfd_create("probe", 1));
            try { Native(ftruncate(fd, 1 << 16)); } finally { _ = close(fd); }
            return "memfd sized";
        });
        Try(w, "listRoot", () => string.Join(",", Directory.GetFileSystemEntries("/").Order()));
        Try(w, "ownStatus", () => File.ReadAllText("/proc/self/status"));
        Try(w, "threadsSeccomp", () => string.Join(",", Directory.GetDirectories("/proc/self/task").Select(t =>
            Path.GetFileName(t) + ":" + (File.ReadAllLines(Path.Combine(t, "status")).FirstOrDefault(l => l.StartsWith("Seccomp:")) ?? "Seccomp: ?")[8..].Trim())));
        Try(w, "networkInterfaces", () => string.Join(",", File.ReadAllLines("/proc/net/dev").Skip(2).Select(l => l.Split(':')[0].Trim())));
        Try(w, "visibleProcesses", () => string.Join(",", Directory.GetDirectories("/proc").Select(Path.GetFileName).Where(n => n!.All(char.IsAsciiDigit))));

        // The service's files and secrets.
        Try(w, "readDataFile", () => File.ReadAllText(dataFile));
        Try(w, "listDataDir", () => string.Join(",", Directory.GetFileSystemEntries(dataDir)));
        Try(w, "listRepoDir", () => string.Join(",", Directory.GetFileSystemEntries(repoDir)));
        Try(w, "readEtcPasswd", () => File.ReadAllText("/etc/passwd"));
        Try(w, "listHome", () => string.Join(",", Directory.GetFileSystemEntries("/home")));
        Try(w, "listRootHome", () => string.Join(",", Directory.GetFileSystemEntries("/root")));
        Try(w, "readServiceEnviron", () => File.ReadAllText($"/proc/{servicePid}/environ"));
        Try(w, "readServiceCmdline", () => File.ReadAllText($"/proc/{servicePid}/cmdline"));
        Try(w, "readPid1Environ", () => File.ReadAllText("/proc/1/environ"));
        Try(w, "readPid1Cmdline", () => File.ReadAllText("/proc/1/cmdline"));
        Try(w, "readEveryVisibleEnviron", () =>
        {
            var all = new StringBuilder();
            foreach (var dir in Directory.GetDirectories("/proc").Where(d => Path.GetFileName(d).All(char.IsAsciiDigit)))
                foreach (var file in (string[])["environ", "cmdline"])
                    try { all.Append(dir).Append('/').Append(file).Append('=').Append(File.ReadAllText(Path.Combine(dir, file))).Append('\n'); }
                    catch (Exception ex) { all.Append(dir).Append('/').Append(file).Append(": ").Append(ex.GetType().Name).Append('\n'); }
            return all.ToString();
        });

        // New programs and processes.
        Try(w, "execShell", () =>
        {
            using var p = Process.Start(new ProcessStartInfo("/bin/sh", "-c id") { RedirectStandardOutput = true, UseShellExecute = false })!;
            return p.StandardOutput.ReadToEnd();
        });
        Try(w, "startRuntimeProcess", () =>
        {
            using var p = Process.Start(new ProcessStartInfo(Environment.ProcessPath!, "--version") { RedirectStandardOutput = true, UseShellExecute = false })!;
            return p.StandardOutput.ReadToEnd();
        });
        Try(w, "execveRuntime", () => Native(execve(Environment.ProcessPath ?? "/dotnet/dotnet", new[] { Environment.ProcessPath, "--version", null }, new string?[] { null })));
        Try(w, "fork", () =>
        {
            var pid = fork();
            if (pid == 0) _exit(0); // the child, had there been one, leaves at once
            return Native(pid);
        });
        Try(w, "clone3", () => Native(Syscall("clone3", 0, 0)));

        // The network.
        Try(w, "tcpSocket", () =>
        {
            using var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            return "socket created";
        });
        Try(w, "connectToService", () =>
        {
            using var c = new TcpClient();
            c.Connect("127.0.0.1", servicePort);
            return "connected";
        });
        Try(w, "unixSocket", () => Native(socket(1 /* AF_UNIX */, 1 /* SOCK_STREAM */, 0)));
        Try(w, "socketpair", () => Native(socketpair(1, 1, 0, new int[2])));

        // Writing the file system.
        Try(w, "writeTmp", () => { File.WriteAllText("/tmp/probe.txt", "x"); return "written"; });
        Try(w, "writeRuntimeDir", () => { File.WriteAllText(Path.Combine(AppContext.BaseDirectory, "probe.txt"), "x"); return "written"; });
        Try(w, "writeDataDir", () => { File.WriteAllText(Path.Combine(dataDir, "probe.txt"), "x"); return "written"; });
        Try(w, "openDataFileForWriting", () => Native(open(dataFile, OWronly, 0)));
        Try(w, "openOwnAssemblyForWriting", () => Native(open(ownDll, ORdwr, 0)));
        Try(w, "createFileInRoot", () => Native(open("/probe.txt", OCreat | OWronly, 0x1a4)));
        Try(w, "mkdir", () => Native(mkdir("/tmp/probe-dir", 0x1ed)));
        Try(w, "unlink", () => Native(unlink(ownDll)));
        Try(w, "rename", () => Native(rename(ownDll, ownDll + ".moved")));
        Try(w, "symlink", () => Native(symlink("/", "/tmp/probe-link")));
        Try(w, "chmod", () => Native(chmod(ownDll, 0x1ff)));

        // Other processes.
        Try(w, "signalService", () => Native(kill(servicePid, 0)));
        Try(w, "signalPid1", () => Native(kill(1, 0)));
        Try(w, "signalEveryone", () => Native(kill(-1, 0)));
        Try(w, "ptraceAttachPid1", () =>
        {
            var rc = Syscall("ptrace", 16 /* PTRACE_ATTACH */, 1);
            if (rc == 0) Syscall("ptrace", 17 /* PTRACE_DETACH */, 1);
            return Native(rc);
        });
        Try(w, "processVmReadv", () => Native(Syscall("process_vm_readv", 1, 0, 0, 0, 0, 0)));

        // Kernel interfaces that would widen or bypass the fences.
        Try(w, "ioUringSetup", () =>
        {
            var fd = Syscall("io_uring_setup", 1, Marshal.AllocHGlobal(256).ToInt64());
            if (fd >= 0) _ = close((int)fd);
            return Native(fd);
        });
        Try(w, "unshareUserNamespace", () => Native(unshare(0x10000000)));
        Try(w, "mountTmpfs", () => Native(mount("none", "/tmp", "tmpfs", 0, IntPtr.Zero)));
        Try(w, "setuidRoot", () => Native(setuid(0)));
        Try(w, "bpf", () => Native(Syscall("bpf", 0, 0, 0)));
        Try(w, "perfEventOpen", () => Native(Syscall("perf_event_open", 0, 0, -1, -1, 0)));
        Try(w, "userfaultfd", () => Native(Syscall("userfaultfd", 0)));
        Try(w, "keyctl", () => Native(Syscall("keyctl", 0, 0)));
        Try(w, "personality", () => Native(Syscall("personality", 0x0040000 /* ADDR_NO_RANDOMIZE */)));

        w.WriteEndObject();
    }

    static long Syscall(string name, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0, long a6 = 0)
    {
        var nr = seccomp_syscall_resolve_name(name);
        if (nr < 0) throw new PlatformNotSupportedException($"no system call {name} on this architecture");
        return syscall(nr, a1, a2, a3, a4, a5, a6);
    }

    /// <summary>A libc return value: negative means failed with errno.</summary>
    static int Native(long rc) => rc < 0 ? throw new NativeFailure(Marshal.GetLastPInvokeError()) : (int)rc;

    sealed class NativeFailure(int errno) : Exception($"errno {errno}")
    {
        public int Errno { get; } = errno;
    }

    /// <summary>Writes {"ok":true,"output":…} or {"ok":false,"errno":n?,"error":"Type: message"}.</summary>
    static void Try(Utf8JsonWriter w, string name, Func<object> attempt)
    {
        w.WritePropertyName(name);
        w.WriteStartObject();
        try
        {
            var output = attempt()?.ToString() ?? "";
            w.WriteBoolean("ok"u8, true);
            w.WriteString("output"u8, output.Length > 65536 ? output[..65536] : output);
        }
        catch (Exception ex)
        {
            w.WriteBoolean("ok"u8, false);
            var errno = ex switch
            {
                NativeFailure n => n.Errno,
                SocketException s => s.NativeErrorCode,
                System.ComponentModel.Win32Exception win => win.NativeErrorCode,
                _ => ex.InnerException is System.ComponentModel.Win32Exception inner ? inner.NativeErrorCode : (int?)null,
            };
            if (errno is { } e) w.WriteNumber("errno"u8, e);
            w.WriteString("error"u8, ex.GetType().Name + ": " + ex.Message);
        }
        w.WriteEndObject();
    }
}
