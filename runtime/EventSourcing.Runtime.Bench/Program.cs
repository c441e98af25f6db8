using EventSourcing.Runtime.Bench;
using EventSourcing.Runtime.Host;

// In-process benchmarks of the runtime host, kept out of the production assembly (runtime/bin): the apply path
// (default) and the pool hygiene's cost per call (--pools). Each prints one JSON object on stdout.
//   dotnet run -c Release --project runtime/EventSourcing.Runtime.Bench -- [--pools] [--examples DIR]

var pools = false;
string? examplesDir = null;
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--pools":
            pools = true;
            break;
        case "--examples" when i + 1 < args.Length:
            examplesDir = args[++i];
            break;
        case "-h" or "--help":
            Console.Error.WriteLine("usage: EventSourcing.Runtime.Bench [--pools] [--examples DIR]");
            return 0;
        default:
            Console.Error.WriteLine($"unknown argument '{args[i]}'");
            return 2;
    }
}

// The host's own process settings, so that the figures are the host's.
HostSetup.ConfigureProcess();
return pools ? PoolHygieneBench.Run(examplesDir) : ApplyBench.Run(examplesDir);
