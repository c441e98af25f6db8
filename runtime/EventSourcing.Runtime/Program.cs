using System.Globalization;
using EventSourcing.Runtime;
using EventSourcing.Runtime.Compilation;

// The runtime host: compiles and runs tenants' C# reducers/projections for the TypeScript service.
// stdout carries protocol lines only (see runtime/protocol.json); logs go to stderr.

var modeName = Environment.GetEnvironmentVariable("EVENTSOURCING_RUNTIME_MODE") ?? "all";
var bench = false;
var benchPools = false;
string? examplesDir = null;
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--mode" when i + 1 < args.Length:
            modeName = args[++i];
            break;
        case "--bench":
            bench = true;
            break;
        case "--bench-pools":
            benchPools = true;
            break;
        case "--examples" when i + 1 < args.Length:
            examplesDir = args[++i];
            break;
        case "-h" or "--help":
            Console.Error.WriteLine("usage: EventSourcing.Runtime [--mode compile|exec|all] | --bench [--examples DIR] | --bench-pools [--examples DIR]");
            return 0;
        default:
            Console.Error.WriteLine($"unknown argument '{args[i]}'");
            return 2;
    }
}

HostSetup.ConfigureProcess();

if (bench) return Bench.Run(examplesDir);
if (benchPools) return PoolHygieneBench.Run(examplesDir);

HostMode mode;
switch (modeName)
{
    case "compile": mode = HostMode.Compile; break;
    case "exec": mode = HostMode.Exec; break;
    case "all": mode = HostMode.All; break;
    default:
        Console.Error.WriteLine($"unknown mode '{modeName}' (compile|exec|all)");
        return 2;
}

var stdout = Console.OpenStandardOutput();
var stdin = Console.OpenStandardInput();
// Anything that writes to Console.Out by accident must not corrupt the protocol stream.
Console.SetOut(Console.Error);

Log.Info($"starting in {mode} mode, pid {Environment.ProcessId}");
if ((mode & HostMode.Exec) != 0)
{
    // Tenants share this process: never run their code without the pool hygiene (issue 22), e.g. on a runtime whose
    // pool internals moved.
    try
    {
        EventSourcing.Runtime.Execution.PoolHygiene.SelfTest();
    }
    catch (Exception ex) when (ex is InvalidOperationException or TypeInitializationException)
    {
        Console.Error.WriteLine($"[runtime] pool hygiene unavailable, refusing to run tenant code: {ex}");
        return 5;
    }
}
// A quarantine executor lowers its scheduling group's priority while it still may write /proc/self/autogroup.
CpuPriority.Apply();
// The seccomp filter goes on before the compiler warms up and before any request (so any tenant assembly) is read.
if (!Sandbox.Install())
{
    if (Environment.GetEnvironmentVariable("EVENTSOURCING_SANDBOX") == "required")
    {
        Console.Error.WriteLine($"[runtime] sandbox required but the seccomp filter could not be installed: {Sandbox.Failure}");
        return 4;
    }
    Log.Error($"running without the seccomp filter: {Sandbox.Failure}");
}
if (mode == HostMode.Compile && Environment.GetEnvironmentVariable("EVENTSOURCING_COMPILER_WARMUP") != "0")
    CompilerWarmup.Start();
try
{
    StdioServer.Run(stdin, stdout, new RequestDispatcher(mode));
}
catch (IOException ex)
{
    // The parent closed our pipes.
    Log.Error($"stdio closed: {ex.Message}");
    return 3;
}
return 0;

namespace EventSourcing.Runtime
{
    public static class HostSetup
    {
        static bool _configured;

        /// <summary>Deterministic process settings for tenant code: UTC time zone, invariant culture, and a
        /// default regex match timeout (EVENTSOURCING_REGEX_TIMEOUT_MS, default 2000) against catastrophic backtracking.</summary>
        public static void ConfigureProcess()
        {
            if (_configured) return;
            _configured = true;
            Environment.SetEnvironmentVariable("TZ", "UTC");
            CultureInfo.DefaultThreadCurrentCulture = CultureInfo.InvariantCulture;
            CultureInfo.DefaultThreadCurrentUICulture = CultureInfo.InvariantCulture;
            CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
            CultureInfo.CurrentUICulture = CultureInfo.InvariantCulture;
            var ms = int.TryParse(Environment.GetEnvironmentVariable("EVENTSOURCING_REGEX_TIMEOUT_MS"), out var v) && v > 0 ? v : 2000;
            AppContext.SetData("REGEX_DEFAULT_MATCH_TIMEOUT", TimeSpan.FromMilliseconds(ms));
            // The static Regex methods keep the last CacheSize patterns they parsed in a process-wide cache: a tenant's
            // patterns of millions of characters would stay held after its call, charged to nobody, until they fill the
            // heap and a neighbour's call is failed for it (issue 22 red team, escape-corpus/memory-regex-cache.cs).
            // No cache: a static call parses its pattern each time, and what it parsed dies with the call.
            System.Text.RegularExpressions.Regex.CacheSize = 0;
        }
    }
}
