using System.Text.Json.Nodes;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>Memory is charged to the tenant that holds it: type initialisers run at load, under the tenant's cap
/// (TenantMemory, AssemblyRegistry.Load).</summary>
public class TenantMemoryTests
{
    /// <summary>A reducer whose static constructor builds <paramref name="mib"/> MiB of strings (finding 2 of issue 22).</summary>
    static string Hog(int mib, string ns = "Hog") => $$"""
        using EventSourcing;
        namespace {{ns}}
        {
            public sealed class HogState { public long N { get; set; } }
            [AggregateType("hog")]
            public sealed class HogReducer : IReducer<HogState>
            {
                static readonly string A = new string('a', {{mib}} * 256 * 1024);
                static readonly string B = new string('b', {{mib}} * 256 * 1024);
                public HogState Apply(HogState state, Event e) { state.N += A.Length + B.Length; return state; }
            }
        }
        """;

    static string Image(InProcessHost host, string source)
    {
        var compiled = host.Compile("Hog.cs", source);
        Assert.True(compiled["ok"]!.GetValue<bool>(), compiled["compilationError"]?.GetValue<string>());
        return compiled["assembly"]!.GetValue<string>();
    }

    static JsonObject Load(InProcessHost host, string assemblyId, string image, string tenantId, long? cap = null)
    {
        var payload = new JsonObject { ["assemblyId"] = assemblyId, ["assembly"] = image, ["tenantId"] = tenantId };
        if (cap is not null) payload["tenantMemoryBytes"] = cap;
        return host.Send("load", payload);
    }

    [Fact]
    public void AStaticInitialiserOverTheCapFailsItsOwnLoadAndItsMemoryIsReturned()
    {
        var host = new InProcessHost(HostMode.All);
        var image = Image(host, Hog(40));
        var before = host.Result("stats", new JsonObject { ["collect"] = true })["gcHeapBytes"]!.GetValue<long>();

        var refused = Load(host, "attacker/hog", image, "attacker");
        Assert.Equal("error", refused["type"]!.GetValue<string>());
        Assert.Equal("TENANT_MEMORY_EXCEEDED", refused["payload"]!["code"]!.GetValue<string>());
        Assert.Contains("the limit is 32 MiB", refused["payload"]!["message"]!.GetValue<string>());

        // Not loaded, its load context already collected, the 40 MiB of strings given back.
        var stats = host.Result("stats");
        Assert.Equal(0, stats["loadedAssemblies"]!.GetValue<int>());
        Assert.Equal(0, stats["unloadingAssemblies"]!.GetValue<int>());
        Assert.True(stats["gcHeapBytes"]!.GetValue<long>() < before + (16 << 20), $"heap {stats["gcHeapBytes"]} after, {before} before");
        var missing = host.Send("apply", new JsonObject
        {
            ["assemblyId"] = "attacker/hog", ["className"] = "Hog.HogReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("X", new { })) }),
        });
        Assert.Equal("ASSEMBLY_NOT_LOADED", missing["payload"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void TheCapIsTheSumOverTheTenantsAssembliesAndOtherTenantsAreNotCharged()
    {
        var host = new InProcessHost(HostMode.All);
        var image = Image(host, Hog(10));
        const long Cap = 16L << 20;
        var first = host.Result("load", new JsonObject { ["assemblyId"] = "t1/a", ["assembly"] = image, ["tenantId"] = "t1", ["tenantMemoryBytes"] = Cap });
        // Its static initialiser ran at load and was charged: 10 MiB of strings.
        Assert.InRange(first["chargedBytes"]!.GetValue<long>(), 10L << 20, 11L << 20);
        Assert.Equal(first["chargedBytes"]!.GetValue<long>(), first["tenantBytes"]!.GetValue<long>());

        var second = Load(host, "t1/b", image, "t1", Cap);
        Assert.Equal("TENANT_MEMORY_EXCEEDED", second["payload"]!["code"]!.GetValue<string>());
        // Another tenant, same bytes: its own allowance.
        Assert.Equal("result", Load(host, "t2/a", image, "t2", Cap)["type"]!.GetValue<string>());
        // Unloading gives the tenant its allowance back.
        host.Result("unload", new JsonObject { ["assemblyId"] = "t1/a" });
        var again = host.Result("load", new JsonObject { ["assemblyId"] = "t1/b", ["assembly"] = image, ["tenantId"] = "t1", ["tenantMemoryBytes"] = Cap });
        Assert.Equal(again["chargedBytes"]!.GetValue<long>(), again["tenantBytes"]!.GetValue<long>());

        // What it holds still works: the statics were built once, at load.
        var results = host.Apply("t1/b", "Hog.HogReducer", (null, Events.Array(Events.Make("X", new { }))));
        Assert.True(results[0]!["ok"]!.GetValue<bool>());
    }

    [Fact]
    public void AThrowingStaticInitialiserRunsAtLoadAndFailsTheLoad()
    {
        var host = new InProcessHost(HostMode.All);
        var image = Image(host, """
            using EventSourcing;
            namespace Boom
            {
                public sealed class S { public int N { get; set; } }
                public sealed class BoomReducer : IReducer<S>
                {
                    static readonly int X = int.Parse("not a number");
                    public S Apply(S s, Event e) { s.N = X; return s; }
                }
            }
            """);
        // Issue 28: no longer loaded (the runtime would keep its exception, and every rethrow rewrites its trace: memory
        // from one call to the next; TypeInitializerTests).
        var refused = Load(host, "t/boom", image, "t");
        Assert.Equal("LOAD_FAILED", refused["payload"]!["code"]!.GetValue<string>());
        Assert.Contains("the static initialiser of Boom.BoomReducer threw FormatException", refused["payload"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void AConverterKeptByTheSerializerIsChargedWhenTheRunnerIsPreparedNotLaterInACall()
    {
        var host = new InProcessHost(HostMode.All);
        // Two levels down from the state: the serializer would create this converter only at the first serialization.
        var image = Image(host, """
            using System;
            using System.Text.Json;
            using System.Text.Json.Serialization;
            using EventSourcing;
            namespace Conv
            {
                public sealed class HogConverter : JsonConverter<Leaf>
                {
                    readonly string _held = new string('c', 20 * 1024 * 1024);
                    public override Leaf Read(ref Utf8JsonReader r, Type t, JsonSerializerOptions o) { r.Skip(); return new Leaf(); }
                    public override void Write(Utf8JsonWriter w, Leaf v, JsonSerializerOptions o) => w.WriteNumberValue(_held.Length);
                }
                [JsonConverter(typeof(HogConverter))] public sealed class Leaf { }
                public sealed class Middle { public Leaf? Leaf { get; set; } }
                public sealed class S { public Middle? Middle { get; set; } }
                public sealed class ConvReducer : IReducer<S> { public S Apply(S s, Event e) => s; }
            }
            """);
        Assert.Equal("result", Load(host, "t/conv", image, "t")["type"]!.GetValue<string>());
        var refused = host.Send("apply", new JsonObject
        {
            ["assemblyId"] = "t/conv", ["className"] = "Conv.ConvReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("X", new { })) }),
        });
        Assert.Equal("TENANT_MEMORY_EXCEEDED", refused["payload"]!["code"]!.GetValue<string>());
        Assert.Contains("preparing Conv.ConvReducer", refused["payload"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void StaticFieldsOfGenericTypesAreRefusedButLambdasInThemAreNot()
    {
        var host = new InProcessHost(HostMode.All);
        var refused = host.Compile("G.cs", """
            using EventSourcing;
            namespace G
            {
                public static class Hog<T> { public static readonly string S = new string('x', 1000); }
                public sealed class S { public int N { get; set; } }
                public sealed class GReducer : IReducer<S>
                {
                    public S Apply(S s, Event e) { s.N += Hog<int>.S.Length + Hog<long>.S.Length; return s; }
                }
            }
            """);
        Assert.False(refused["ok"]!.GetValue<bool>());
        var error = refused["compilationError"]!.GetValue<string>();
        Assert.True(error.Contains("static field G.Hog`1.S in a generic type"), error);

        var allowed = host.Compile("L.cs", """
            using System.Linq;
            using EventSourcing;
            namespace L
            {
                public static class Util<T> { public const int Zero = 0; public static int Count(T[] xs) => xs.Count(x => x is not null); }
                public sealed class S { public int N { get; set; } }
                public sealed class LReducer : IReducer<S>
                {
                    public S Apply(S s, Event e) { s.N += Util<string>.Count(new[] { "a", "b" }) + Util<int>.Zero; return s; }
                }
            }
            """);
        Assert.True(allowed["ok"]!.GetValue<bool>(), allowed["compilationError"]?.GetValue<string>());
    }
    [Fact]
    public void NothingAStaticRegexMethodParsedOutlivesTheCall()
    {
        // Issue 22 red team (runtime/escape-corpus/memory-regex-cache.cs): the static Regex methods cached the patterns
        // they parsed process-wide, so that a call could leave hundreds of MiB held after it, charged to nobody.
        var host = new InProcessHost(HostMode.All);
        var source = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "memory-regex-cache.cs"));
        var image = Image(host, source);
        Assert.Equal("result", Load(host, "t/regex", image, "t")["type"]!.GetValue<string>());
        var before = host.Result("stats", new JsonObject { ["collect"] = true })["gcHeapBytes"]!.GetValue<long>();
        var events = Events.Array(Enumerable.Range(0, 12).Select(_ => Events.Make("X", new { })).ToArray());
        var result = host.Result("apply", new JsonObject
        {
            ["assemblyId"] = "t/regex", ["className"] = "Escape.EscapeReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = events }),
        });
        Assert.True(result["results"]![0]!["ok"]!.GetValue<bool>(), result.ToJsonString());
        var after = host.Result("stats", new JsonObject { ["collect"] = true })["gcHeapBytes"]!.GetValue<long>();
        // 12 patterns of 2 MiB each were parsed (about 80 MiB stayed held with the cache); what stays now is the scratch the
        // parser rented, left in the shared array pool until the next tenant switch (PoolHygiene), not the patterns.
        Assert.True(after - before < (8L << 20), $"heap {after} after the call, {before} before: the parsed patterns outlived it");
        Assert.Equal(0, System.Text.RegularExpressions.Regex.CacheSize);
    }
    [Fact]
    public void MetadataTheSerializerBuildsInACallIsChargedWhenKeptAndRefusedOverTheCap()
    {
        // Issue 22 red team (runtime/escape-corpus/memory-late-converter.cs): a converter of a type only a value typed object
        // reaches was created inside the call and kept, uncharged (+40 MiB held after the call, 4,880 bytes charged).
        var host = new InProcessHost(HostMode.All);
        var image = Image(host, File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "memory-late-converter.cs")));
        Assert.Equal("result", Load(host, "t/late", image, "t")["type"]!.GetValue<string>());
        var before = host.Result("stats", new JsonObject { ["collect"] = true })["gcHeapBytes"]!.GetValue<long>();
        JsonObject Apply(string assemblyId) => new()
        {
            ["assemblyId"] = assemblyId, ["className"] = "Escape.EscapeReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("X", new { })) }),
        };
        var result = host.Result("apply", Apply("t/late"))["results"]![0]!;
        Assert.False(result["ok"]!.GetValue<bool>(), result.ToJsonString());
        // Failed where it was serialized (the serializer caches the refusal for that type: it fails alike every time).
        Assert.Equal("STATE_SERIALIZATION_FAILED", result["error"]!["code"]!.GetValue<string>());
        Assert.Contains("(serializer metadata built in a call: 40 MiB); the limit is 32 MiB", result["error"]!["message"]!.GetValue<string>());
        var after = host.Result("stats", new JsonObject { ["collect"] = true })["gcHeapBytes"]!.GetValue<long>();
        Assert.True(after - before < (8L << 20), $"heap {after} after the call, {before} before: the converter was kept");

        // Under the cap it is kept, and charged: a 1 MiB converter.
        var small = Image(host, File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "memory-late-converter.cs")).Replace("20 * 1024 * 1024", "512 * 1024"));
        var loaded = host.Result("load", new JsonObject { ["assemblyId"] = "u/late", ["assembly"] = small, ["tenantId"] = "u" });
        var charged = loaded["tenantBytes"]!.GetValue<long>();
        Assert.True(host.Result("apply", Apply("u/late"))["results"]![0]!["ok"]!.GetValue<bool>());
        var again = Load(host, "u/other", image, "u", 1);
        Assert.Equal("TENANT_MEMORY_EXCEEDED", again["payload"]!["code"]!.GetValue<string>());
        var held = double.Parse(System.Text.RegularExpressions.Regex.Match(again["payload"]!["message"]!.GetValue<string>(), @"would hold ([0-9.]+) MiB").Groups[1].Value,
            System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(held * (1 << 20) >= charged + (1 << 20), $"{again["payload"]} (charged {charged} at load)");
    }
}
