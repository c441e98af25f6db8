using System.Runtime.InteropServices;

namespace EventSourcing.Runtime.Host;

/// <summary>
/// The lowest CPU priority for a quarantine executor (EVENTSOURCING_AUTOGROUP_NICE, set by the service).
/// bwrap's <c>--new-session</c> makes this process a session leader, and with the kernel's autogroups
/// (<c>kernel.sched_autogroup_enabled</c>, the default of most distributions) a new session is a new
/// scheduling group: groups are weighed against each other, and a process's own nice value counts only
/// inside its group. So the <c>nice -n 19</c> in front of the sandbox chain alone leaves a spinning
/// quarantined tenant the CPU share of the whole service. The group's nice is set here, by writing
/// <c>/proc/self/autogroup</c>, before the seccomp filter (which refuses opening files for writing)
/// and before any request, so before any tenant code.
/// </summary>
internal static class CpuPriority
{
    [DllImport("libc", SetLastError = true)] static extern int getsid(int pid);

    // Process-wide on purpose: the autogroup nice is the process's (its session's), set once at start-up.
    /// <summary>What happened, for the ready line: the group nice set, or why not.</summary>
    public static string? Outcome { get; private set; }

    public static void Apply()
    {
        var wanted = Environment.GetEnvironmentVariable("EVENTSOURCING_AUTOGROUP_NICE");
        if (string.IsNullOrEmpty(wanted)) return;
        if (!int.TryParse(wanted, out var nice) || nice < 0 || nice > 19)
        {
            Outcome = $"refused: EVENTSOURCING_AUTOGROUP_NICE={wanted} (0-19 only: lowering is never asked for)";
            return;
        }
        // Only a group of our own. bwrap (--unshare-pid --new-session) makes its init, pid 1 of our PID
        // namespace, the leader of a new session, and we are its child. Without bwrap (the launcher then
        // does not ask) the host would share the service's session, whose group this would renice.
        var sid = getsid(0);
        if (!(sid == 1 || sid == Environment.ProcessId))
        {
            Outcome = $"skipped: the session ({sid}) is not the sandbox's own";
            return;
        }
        if (!File.Exists("/proc/self/autogroup"))
        {
            Outcome = "skipped: no autogroups in this kernel";
            return;
        }
        // The kernel takes one autogroup change per 100 ms machine-wide from processes without CAP_SYS_ADMIN (EAGAIN).
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                File.WriteAllText("/proc/self/autogroup", nice.ToString(System.Globalization.CultureInfo.InvariantCulture));
                Outcome = File.ReadAllText("/proc/self/autogroup").Trim();
                return;
            }
            catch (IOException) when (attempt < 30)
            {
                Thread.Sleep(20);
            }
            catch (Exception ex)
            {
                Outcome = $"failed: {ex.Message}";
                Log.Error($"cannot set the autogroup nice: {ex.Message}");
                return;
            }
        }
    }
}
