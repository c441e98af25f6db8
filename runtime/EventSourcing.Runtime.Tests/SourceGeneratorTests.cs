using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Issue 27 item 5: the Regex ([GeneratedRegex]) and System.Text.Json (JsonSerializerContext) source generators run in the
/// compile, their output passes the IL check, and what only their output may do stays out of the tenant's own code
/// (runtime/escape-corpus/generator-*.cs try it by hand).
/// </summary>
public class SourceGeneratorTests
{
    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    internal const string Program = """
        using System.Text.Json;
        using System.Text.Json.Serialization;
        using System.Text.RegularExpressions;
        using EventSourcing;

        namespace Generated
        {
            public sealed class Counter { public int Value { get; set; } public string Text { get; set; } = ""; }
            public sealed class Line { public string Sku { get; set; } = ""; public int Qty { get; set; } }

            [JsonSerializable(typeof(Line))]
            [JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
            internal partial class LineContext : JsonSerializerContext { }

            public static partial class Patterns
            {
                [GeneratedRegex("^SKU-([0-9]+)$", RegexOptions.IgnoreCase)]
                public static partial Regex Sku();
            }

            public sealed class CounterReducer : IReducer<Counter>
            {
                public Counter Apply(Counter state, Event e)
                {
                    var line = JsonSerializer.Deserialize(e.Data.GetRawText(), LineContext.Default.Line)!;
                    var m = Patterns.Sku().Match(line.Sku);
                    if (m.Success) state.Value += int.Parse(m.Groups[1].Value) * line.Qty;
                    state.Text = JsonSerializer.Serialize(line, LineContext.Default.Line);
                    return state;
                }
            }
        }
        """;

    [Fact]
    public void GeneratedRegexAndJsonContextCompileAndRun()
    {
        var compiled = _host.Compile("Generated.cs", Program);
        Assert.True(compiled["ok"]!.GetValue<bool>(), compiled.ToJsonString());
        _host.CompileAndLoad("generated", new[] { new SourceFile("Generated.cs", Program) });
        var r = _host.Apply("generated", "Generated.CounterReducer",
            (null, Events.Array(Events.Make("Added", new { sku = "sku-7", qty = 2 }), Events.Make("Added", new { sku = "x", qty = 5 })))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        Assert.Equal(14, r["states"]![1]!["value"]!.GetValue<int>());
        Assert.Equal("{\"sku\":\"x\",\"qty\":5}", r["states"]![1]!["text"]!.GetValue<string>());
    }

    static JsonObject Run(InProcessHost host, string id, string source, string className, params JsonNode[] events)
    {
        host.CompileAndLoad(id, new[] { new SourceFile(id + ".cs", source) });
        return (JsonObject)host.ApplyRaw(id, className, (null, new JsonArray(events))).Single()!;
    }

    static string Corpus(string file) => File.ReadAllText(Path.Combine(Repo.EscapeCorpus, file));

    [Theory]
    [InlineData("generator-static-options-mutated.cs")]
    [InlineData("generator-context-options-mutated.cs")]
    public void ChangingSharedOptionsFailsTheCallThatTriesIt(string file)
    {
        var r = Run(_host, "options", Corpus(file), "Escape.EscapeReducer", Events.Make("X", new { }));
        Assert.False(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        Assert.Contains("InvalidOperationException", r.ToJsonString());
    }

    [Fact]
    public void EveryCallSeesTheSameGeneratedObjects()
    {
        _host.CompileAndLoad("shared", new[] { new SourceFile("shared.cs", Corpus("generator-shared-executor.cs")) });
        string Once()
        {
            var r = _host.Apply("shared", "Escape.EscapeReducer", (null, Events.Array(Events.Make("X", new { sku = "a", qty = 1 })))).Single()!;
            Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
            return r["states"]![0]!["value"]!.GetValue<string>();
        }
        var seen = Once();
        Assert.Equal(seen, Once());
        Assert.True(seen.Contains("context:True", StringComparison.Ordinal) && seen.Contains("options:True/True/0", StringComparison.Ordinal), seen);
        Assert.True(seen.Contains("line:{\"Sku\":\"\",\"Qty\":0},data:sku|qty", StringComparison.Ordinal), seen);
    }

    /// <summary>Event.DataAs on an event the tenant built (no host options) used a process-wide options instance whose metadata
    /// cache kept every T it saw, and with it the tenant's load context, after unload. Generated contexts and static options
    /// are the tenant's own objects: they go with it too.</summary>
    [Theory]
    [InlineData("DataAs on a tenant-made event", """
        using EventSourcing;
        namespace Leak
        {
            public sealed class Mine { public int N { get; set; } }
            public sealed class S { public int N { get; set; } }
            public sealed class LeakReducer : IReducer<S>
            {
                public S Apply(S state, Event e) { state.N += new Event { Data = e.Data }.DataAs<Mine>().N; return state; }
            }
        }
        """)]
    [InlineData("a generated context and static options", """
        using System.Text.Json;
        using System.Text.Json.Serialization;
        using EventSourcing;
        namespace Leak
        {
            public sealed class Mine { public int N { get; set; } }
            public sealed class S { public int N { get; set; } }
            [JsonSerializable(typeof(Mine))] internal partial class MineContext : JsonSerializerContext { }
            internal static class Kept { public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web); }
            public sealed class LeakReducer : IReducer<S>
            {
                public S Apply(S state, Event e)
                {
                    state.N += JsonSerializer.Deserialize(e.Data.GetRawText(), MineContext.Default.Mine)!.N;
                    state.N += JsonSerializer.Deserialize<Mine>(e.Data.GetRawText(), Kept.Options)!.N;
                    return state;
                }
            }
        }
        """)]
    public void TheTenantsLoadContextUnloadsAfterItsJsonCalls(string shape, string source)
    {
        var host = new InProcessHost(HostMode.All);
        var r = Run(host, "leak", source, "Leak.LeakReducer", Events.Make("X", new { n = 7 }));
        Assert.True(r["ok"]!.GetValue<bool>(), $"{shape}: {r.ToJsonString()}");
        host.Result("unload", new JsonObject { ["assemblyId"] = "leak" });
        var stats = host.Result("stats", new JsonObject { ["collect"] = true });
        Assert.True(stats["unloadingAssemblies"]!.GetValue<int>() == 0, $"{shape}: its load context is still alive: {stats.ToJsonString()}");
    }

    /// <summary>Two tenants' static options with equal settings: System.Text.Json would share one metadata cache among them
    /// (TrackedCachingContexts), so one tenant's loaded options would keep the other's unloaded types alive.</summary>
    [Fact]
    public void EqualStaticOptionsOfTwoTenantsDoNotHoldEachOther()
    {
        const string Source = """
            using System.Text.Json;
            using EventSourcing;
            namespace Leak
            {
                public sealed class Mine { public int N { get; set; } }
                public sealed class S { public int N { get; set; } }
                internal static class Kept { public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web); }
                public sealed class LeakReducer : IReducer<S>
                {
                    public S Apply(S state, Event e) { state.N += JsonSerializer.Deserialize<Mine>(e.Data.GetRawText(), Kept.Options)!.N; return state; }
                }
            }
            """;
        var host = new InProcessHost(HostMode.All);
        var image = host.Compile("leak.cs", Source)["assembly"]!.GetValue<string>();
        foreach (var (id, tenant) in new[] { ("a/leak", "a"), ("b/leak", "b") })
        {
            host.Result("load", new JsonObject { ["assemblyId"] = id, ["assembly"] = image, ["tenantId"] = tenant });
            var r = host.Apply(id, "Leak.LeakReducer", (null, Events.Array(Events.Make("X", new { n = 7 })))).Single()!;
            Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        }
        host.Result("unload", new JsonObject { ["assemblyId"] = "a/leak" });
        var stats = host.Result("stats", new JsonObject { ["collect"] = true });
        Assert.True(stats["loadedAssemblies"]!.GetValue<int>() == 1 && stats["unloadingAssemblies"]!.GetValue<int>() == 0, stats.ToJsonString());
    }

    [Fact]
    public void BuildShipsExactlyTheAllowedGenerators()
    {
        var script = File.ReadAllText(Path.Combine(Repo.Root, "runtime", "build.sh"));
        var line = script.Split('\n').Single(l => l.StartsWith("for n in System.Text.RegularExpressions.Generator", StringComparison.Ordinal));
        var shipped = line["for n in ".Length..line.IndexOf(';')].Split(' ', StringSplitOptions.RemoveEmptyEntries).ToHashSet();
        Assert.True(shipped.SetEquals(SourceGenerators.Allowed.Keys), line);
        Assert.Equal(2, SourceGenerators.Generators.Length);
    }

    [Fact]
    public void TheGeneratorsOwnDiagnosticsComeWithTheCompilersAtTheTenantsLine()
    {
        var source = Program.Replace("\"^SKU-([0-9]+)$\"", "\"^SKU-([0-9]+$\"");
        var result = _host.Compile("src/Generated.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>(), result.ToJsonString());
        Assert.True(result["diagnostics"] is JsonArray, result.ToJsonString());
        var syslib = result["diagnostics"]!.AsArray().FirstOrDefault(d => d!["id"]!.GetValue<string>().StartsWith("SYSLIB", StringComparison.Ordinal));
        Assert.True(syslib is not null, result.ToJsonString());
        Assert.Equal("src/Generated.cs", syslib!["path"]!.GetValue<string>());
    }
}
