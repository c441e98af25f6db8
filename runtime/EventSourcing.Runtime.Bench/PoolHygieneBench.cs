using System.Buffers;
using System.Diagnostics;
using System.Text;
using System.Text.Json;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Execution;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Bench;

/// <summary>
/// <c>--pools</c>: the cost of <see cref="PoolHygiene"/> per call (issue 22). One apply of one event (an append's call)
/// on the bank-account reducer loaded for two tenants, through the dispatcher as in the stdio loop; calls of one tenant
/// in a row and calls alternating between the tenants (a switch, so a scrub, on every call), with the hygiene on and off.
/// Process CPU time per call, several rounds (scenarios interleaved, so that drift on a shared machine hits all alike):
/// median, min and max of the rounds. Then the worst a tenant can make one switch cost: the pools filled beyond the
/// retained budget. Prints one JSON object.
/// </summary>
public static class PoolHygieneBench
{
    static readonly JsonSerializerOptions Indented = new() { WriteIndented = true };

    public static int Run(string? examplesDir)
    {
        examplesDir ??= ApplyBench.FindExamples();
        if (examplesDir is null)
        {
            Console.Error.WriteLine("--pools: examples/bank-account not found (pass --examples DIR)");
            return 1;
        }
        PoolHygiene.SelfTest();
        var dispatcher = new RequestDispatcher(HostMode.All);
        var dir = Path.Combine(examplesDir, "bank-account");
        var files = Directory.GetFiles(dir, "*.cs", SearchOption.AllDirectories).OrderBy(f => f, StringComparer.Ordinal)
            .Select(f => new SourceFile(Path.GetRelativePath(dir, f), File.ReadAllText(f))).ToList();
        using var compiled = JsonDocument.Parse(ApplyBench.Request(dispatcher, "compile", w => ApplyBench.WriteFiles(w, files)));
        var assembly = compiled.RootElement.GetProperty("payload").GetProperty("assembly").GetString();
        foreach (var tenant in new[] { "t1", "t2" })
        {
            ApplyBench.Request(dispatcher, "load", w =>
            {
                w.WriteString("assemblyId", tenant + "/bank");
                w.WriteString("tenant", tenant);
                w.WriteString("assembly", assembly);
            });
        }
        const string ClassName = "BankAccount.AccountReducer";
        var t1 = ApplyBench.ApplyRequest(ClassName, 1, counter: false, assemblyId: "t1/bank");
        var t2 = ApplyBench.ApplyRequest(ClassName, 1, counter: false, assemblyId: "t2/bank");
        foreach (var r in new[] { t1, t2 })
        {
            var check = Encoding.UTF8.GetString(dispatcher.Handle(r).Span);
            if (!check.Contains("\"ok\":true", StringComparison.Ordinal))
            {
                Console.Error.WriteLine("apply failed: " + check);
                return 1;
            }
        }

        if (Environment.GetEnvironmentVariable("BENCH_CENSUS") == "1")
            foreach (var c in PoolHygiene.Census()) Console.Error.WriteLine($"{c.Pool} bucket {c.Bucket}: {c.Arrays} arrays, {c.Bytes} bytes");
        var rounds = int.TryParse(Environment.GetEnvironmentVariable("BENCH_ROUNDS"), out var n) && n > 0 ? n : 7;
        const int Calls = 20_000;
        const long Default = PoolHygiene.DefaultRetainBytes;
        var scenarios = new (string Name, bool Hygiene, bool Alternate, long Retain)[]
        {
            ("sameTenantHygieneOff", false, false, Default), ("sameTenantHygieneOn", true, false, Default),
            ("alternatingHygieneOff", false, true, Default), ("alternatingHygieneOn", true, true, Default),
            ("alternatingHygieneOnRetain32KiB", true, true, 32 << 10), ("alternatingHygieneOnRetain1MiB", true, true, 1 << 20),
        };
        var cpu = scenarios.ToDictionary(s => s.Name, _ => new List<double>());
        var wall = scenarios.ToDictionary(s => s.Name, _ => new List<double>());
        long scrubs = 0, clearedBytes = 0;
        for (var round = -1; round < rounds; round++) // round -1 warms up (JIT tiers)
        {
            foreach (var (name, hygiene, alternate, retain) in scenarios)
            {
                PoolHygiene.Enabled = hygiene;
                PoolHygiene.RetainBytes = retain;
                var (switches0, bytes0) = (PoolHygiene.Switches, PoolHygiene.ClearedBytes);
                var process = Process.GetCurrentProcess();
                var cpu0 = process.TotalProcessorTime;
                var sw = Stopwatch.StartNew();
                for (var i = 0; i < Calls; i++) dispatcher.Handle(alternate && (i & 1) == 1 ? t2 : t1);
                var elapsed = sw.Elapsed;
                process.Refresh();
                var used = process.TotalProcessorTime - cpu0;
                if (round < 0) continue;
                cpu[name].Add(used.TotalMicroseconds / Calls);
                wall[name].Add(elapsed.TotalMicroseconds / Calls);
                if (name == "alternatingHygieneOn")
                {
                    scrubs += PoolHygiene.Switches - switches0;
                    clearedBytes += PoolHygiene.ClearedBytes - bytes0;
                }
            }
        }
        PoolHygiene.Enabled = true;
        PoolHygiene.RetainBytes = Default;

        var results = new Dictionary<string, object?>
        {
            ["callsPerRound"] = Calls,
            ["rounds"] = rounds,
            ["cpuMicrosecondsPerCall"] = cpu.ToDictionary(p => p.Key, p => Spread(p.Value)),
            ["wallMicrosecondsPerCall"] = wall.ToDictionary(p => p.Key, p => Spread(p.Value)),
            ["clearedBytesPerScrub"] = scrubs == 0 ? 0 : clearedBytes / scrubs,
            ["worstScrub"] = WorstScrub(),
            ["elementTypes"] = PoolHygiene.ElementTypes.Length,
            ["processorCount"] = Environment.ProcessorCount,
            ["runtime"] = Environment.Version.ToString(),
        };
        Console.Out.WriteLine(JsonSerializer.Serialize(results, Indented));
        return 0;
    }

    static Dictionary<string, double> Spread(List<double> values)
    {
        var sorted = values.OrderBy(x => x).ToList();
        return new()
        {
            ["median"] = Math.Round(sorted[sorted.Count / 2], 2),
            ["min"] = Math.Round(sorted[0], 2),
            ["max"] = Math.Round(sorted[^1], 2),
        };
    }

    /// <summary>A hostile tenant fills the byte pool (every bucket up to 1 MiB, as many arrays as the partitions take): the
    /// first switch clears all of it (dropping what is above the budget), later switches only what is kept.</summary>
    static Dictionary<string, object?> WorstScrub()
    {
        var pool = ArrayPool<byte>.Shared;
        var rented = new List<byte[]>();
        for (var size = 16; size <= 1 << 20; size *= 2)
            for (var i = 0; i < 32 * Environment.ProcessorCount + 1; i++)
                rented.Add(pool.Rent(size));
        long planted = 0;
        foreach (var a in rented)
        {
            Array.Fill(a, (byte)1);
            planted += a.Length;
            pool.Return(a);
        }
        rented.Clear();
        var bytes0 = PoolHygiene.ClearedBytes;
        var sw = Stopwatch.StartNew();
        PoolHygiene.Scrub();
        var first = sw.Elapsed.TotalMicroseconds;
        var firstBytes = PoolHygiene.ClearedBytes - bytes0;
        var later = new List<double>();
        for (var i = 0; i < 9; i++)
        {
            sw.Restart();
            PoolHygiene.Scrub();
            later.Add(sw.Elapsed.TotalMicroseconds);
        }
        return new()
        {
            ["plantedBytes"] = planted,
            ["firstScrubMicroseconds"] = Math.Round(first, 1),
            ["firstScrubClearedBytes"] = firstBytes,
            ["laterScrubMicroseconds"] = Spread(later),
            ["retainBytes"] = PoolHygiene.RetainBytes,
        };
    }
}
