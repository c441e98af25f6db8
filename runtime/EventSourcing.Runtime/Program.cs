using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

// The runtime host: compiles and runs tenants' C# reducers/projections for the TypeScript service.
// stdout carries protocol lines only (see runtime/protocol.json); logs go to stderr.

var modeName = Environment.GetEnvironmentVariable("EVENTSOURCING_RUNTIME_MODE") ?? "all";
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--mode" when i + 1 < args.Length:
            modeName = args[++i];
            break;
        case "-h" or "--help":
            Console.Error.WriteLine("usage: EventSourcing.Runtime [--mode compile|exec|all]");
            return 0;
        default:
            Console.Error.WriteLine($"unknown argument '{args[i]}'");
            return 2;
    }
}

HostSetup.ConfigureProcess();

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
        EventSourcing.Runtime.Execution.NodaTimeCaches.SelfTest(); // its pattern caches are emptied before every call
        EventSourcing.Runtime.Execution.JsonSharedCaches.SelfTest(); // the serializer's shared caches too (issue 28)
        EventSourcing.Runtime.Execution.KeptRegexRunners.SelfTest(); // kept Regexes' runners are dropped after each call (issue 28)
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
