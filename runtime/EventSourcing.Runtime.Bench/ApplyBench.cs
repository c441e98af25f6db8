using System.Diagnostics;
using System.Text;
using System.Text.Json;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Bench;

/// <summary>
/// The apply benchmark (the default of EventSourcing.Runtime.Bench): in-process micro-benchmark through the same request handling as the stdio loop (JSON request
/// bytes in, JSON response bytes out; no pipes). Prints one JSON object to stdout.
/// </summary>
public static class ApplyBench
{
    static readonly JsonSerializerOptions Indented = new() { WriteIndented = true };

    const string FallbackReducer = """
        using EventSourcing;
        namespace BenchCounter;
        public sealed class CounterState { public long Count { get; set; } public decimal Sum { get; set; } }
        public sealed class CounterReducer : IReducer<CounterState>
        {
            public CounterState Apply(CounterState s, Event e) { s.Count++; s.Sum += e.DataAs<Amount>().Value; return s; }
        }
        public sealed record Amount(decimal Value);
        """;

    public static int Run(string? examplesDir)
    {
        examplesDir ??= FindExamples();
        var dispatcher = new RequestDispatcher(HostMode.All);
        var results = new Dictionary<string, object?>();
        var compile = new Dictionary<string, object?>();
        results["compile"] = compile;

        var examples = new List<(string Name, List<SourceFile> Files)>();
        if (examplesDir is not null)
        {
            foreach (var name in new[] { "bank-account", "orders", "customer-totals" })
            {
                var dir = Path.Combine(examplesDir, name);
                if (!Directory.Exists(dir)) continue;
                examples.Add((name, Directory.GetFiles(dir, "*.cs", SearchOption.AllDirectories).OrderBy(f => f, StringComparer.Ordinal)
                    .Select(f => new SourceFile(Path.GetRelativePath(dir, f), File.ReadAllText(f))).ToList()));
            }
        }
        if (examples.Count == 0) examples.Add(("counter", new List<SourceFile> { new("Counter.cs", FallbackReducer) }));

        // Compile: the very first compile in the process is "cold"; then each example a few times "warm".
        string? bankAssembly = null;
        var first = true;
        foreach (var (name, files) in examples)
        {
            var sw = Stopwatch.StartNew();
            var response = Request(dispatcher, "compile", w => WriteFiles(w, files));
            var coldMs = sw.Elapsed.TotalMilliseconds;
            using var doc = JsonDocument.Parse(response);
            var payload = doc.RootElement.GetProperty("payload");
            if (!payload.GetProperty("ok").GetBoolean())
            {
                Console.Error.WriteLine($"compile of {name} failed: {payload.GetProperty("compilationError").GetString()}");
                return 1;
            }
            if (name is "bank-account" or "counter") bankAssembly = payload.GetProperty("assembly").GetString();
            var warm = new List<double>();
            for (var i = 0; i < 5; i++)
            {
                sw.Restart();
                Request(dispatcher, "compile", w => WriteFiles(w, files));
                warm.Add(sw.Elapsed.TotalMilliseconds);
            }
            compile[name] = new Dictionary<string, object?>
            {
                [first ? "firstInProcessMs" : "firstOfThisExampleMs"] = Math.Round(coldMs, 1),
                ["warmMedianMs"] = Math.Round(warm.OrderBy(x => x).ElementAt(warm.Count / 2), 1),
            };
            first = false;
        }

        // Apply throughput on the bank account (or counter) reducer.
        var className = examples[0].Name == "counter" ? "BenchCounter.CounterReducer" : "BankAccount.AccountReducer";
        Request(dispatcher, "load", w =>
        {
            w.WriteString("assemblyId", "bench");
            w.WriteString("assembly", bankAssembly);
        });
        var apply = new Dictionary<string, object?>();
        results["apply"] = apply;
        foreach (var batch in new[] { 1, 10, 100 })
        {
            var request = ApplyRequest(className, batch, examples[0].Name == "counter");
            // Warm up (JIT tiers), then measure for ~1.5 s.
            for (var i = 0; i < 2000 / batch + 50; i++) dispatcher.Handle(request);
            var sw = Stopwatch.StartNew();
            long events = 0, calls = 0;
            while (sw.ElapsedMilliseconds < 1500)
            {
                for (var i = 0; i < 20; i++) dispatcher.Handle(request);
                events += 20L * batch;
                calls += 20;
            }
            var seconds = sw.Elapsed.TotalSeconds;
            var check = Encoding.UTF8.GetString(dispatcher.Handle(request).Span);
            if (!check.Contains("\"ok\":true", StringComparison.Ordinal))
            {
                Console.Error.WriteLine("apply failed: " + check);
                return 1;
            }
            apply[$"batch{batch}"] = new Dictionary<string, object?>
            {
                ["eventsPerSecond"] = Math.Round(events / seconds),
                ["requestsPerSecond"] = Math.Round(calls / seconds),
                ["microsecondsPerRequest"] = Math.Round(seconds * 1e6 / calls, 1),
                ["requestBytes"] = request.Length,
            };
        }
        results["gcHeapBytes"] = GC.GetTotalMemory(false);
        results["runtime"] = Environment.Version.ToString();
        Console.Out.WriteLine(JsonSerializer.Serialize(results, Indented));
        return 0;
    }

    internal static byte[] ApplyRequest(string className, int batch, bool counter, string assemblyId = "bench")
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteNumber("id", 1);
            w.WriteString("type", "apply");
            w.WriteStartObject("payload");
            w.WriteString("assemblyId", assemblyId);
            w.WriteString("className", className);
            w.WriteStartArray("groups");
            w.WriteStartObject();
            w.WriteStartObject("state");
            w.WriteString("owner", "alice");
            w.WriteNumber("balance", 100);
            w.WriteNumber("transactions", 1);
            w.WriteEndObject();
            w.WriteStartArray("events");
            for (var i = 0; i < batch; i++)
            {
                w.WriteStartObject();
                w.WriteString("eventId", $"evt-{i:D6}-0000-0000-0000-000000000000");
                w.WriteString("aggregateId", "acc-1");
                w.WriteString("aggregateType", "account");
                w.WriteString("eventType", "MoneyDeposited");
                w.WriteNumber("version", i + 2);
                w.WriteString("timestamp", "2025-01-01T00:00:00.000Z");
                w.WriteStartObject("data");
                w.WriteNumber(counter ? "value" : "amount", 10.5m);
                w.WriteEndObject();
                w.WriteNull("metadata");
                w.WriteString("correlationId", "c-1");
                w.WriteNull("causationId");
                w.WriteEndObject();
            }
            w.WriteEndArray();
            w.WriteEndObject();
            w.WriteEndArray();
            w.WriteEndObject();
            w.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    internal static void WriteFiles(Utf8JsonWriter w, List<SourceFile> files)
    {
        w.WriteStartArray("files");
        foreach (var f in files)
        {
            w.WriteStartObject();
            w.WriteString("path", f.Path);
            w.WriteString("content", f.Content);
            w.WriteEndObject();
        }
        w.WriteEndArray();
    }

    static int _nextId = 1;

    internal static byte[] Request(RequestDispatcher dispatcher, string type, Action<Utf8JsonWriter> payload)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteNumber("id", _nextId++);
            w.WriteString("type", type);
            w.WriteStartObject("payload");
            payload(w);
            w.WriteEndObject();
            w.WriteEndObject();
        }
        return dispatcher.Handle(buffer.WrittenMemory).ToArray();
    }

    internal static string? FindExamples()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            var candidate = Path.Combine(dir.FullName, "examples", "bank-account");
            if (Directory.Exists(candidate)) return Path.Combine(dir.FullName, "examples");
        }
        return null;
    }
}
