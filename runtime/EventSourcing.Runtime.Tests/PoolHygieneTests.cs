using System.Buffers;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Execution;
using EventSourcing.Runtime.Host;
using Xunit.Abstractions;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Issue 22's second wall: nothing tenant A's call leaves in a process-wide array pool is readable after tenant B's call.
/// Tenant A (real tenant code, compiled and verified by the host) plants markers through every pool path we know; then
/// tenant B's call goes through the real dispatch path; then this harness, standing in for any door the allowlist missed,
/// rents from <c>ArrayPool&lt;T&gt;.Shared</c> every bucket of every element type until the pool is empty and scans for the
/// markers. The control (hygiene off) shows that the paths do leave markers there and the reader finds them.
/// </summary>
public class PoolHygieneTests(ITestOutputHelper output)
{
    const string PlanterSource = """
        using System;
        using System.Collections.Generic;
        using System.Linq;
        using System.Text;
        using System.Text.Json;
        using System.Text.RegularExpressions;
        using EventSourcing;

        namespace Planter;

        public sealed class Plant
        {
            public string Marker { get; set; } = "";
            public int IntMarker { get; set; }
            public long LongMarker { get; set; }
            public double DoubleMarker { get; set; }
            public decimal DecimalMarker { get; set; }
        }

        public sealed class PlantState
        {
            public string Escaped { get; set; } = "";
            public long Total { get; set; }
        }

        public sealed class PlantReducer : IReducer<PlantState>
        {
            // Not a collection: LINQ cannot size its buffers up front and goes through its pooled segment builder.
            static IEnumerable<T> Repeat<T>(T value, int n) { for (var i = 0; i < n; i++) yield return value; }

            // Text builders grow by renting twice the size and returning the smaller array: a path overwrites what an earlier
            // path left in the buckets it passes through. So the paths go from the largest to the smallest, each with its own
            // top bucket (where its whole text stays).
            static string Pad(int n) => new string('.', n);

            public PlantState Apply(PlantState s, Event e)
            {
                var p = e.DataAs<Plant>();
                var m = p.Marker;
                long total = 0;
                // string.Join / Concat over enumerables (ValueStringBuilder: rented char[], returned uncleared).
                total += string.Join(",", Repeat(m + "-join", 2_800)).Length;                        // ~59k chars
                // Number formatting inside interpolation: the formatted numbers land in the rented buffer.
                total += $"{Pad(12_000)}{p.DecimalMarker:N4}|{p.LongMarker:N0}{Pad(12_000)}".Length;  // ~24k
                total += string.Concat(Repeat(m + "-concat", 560)).Length;                            // ~13k
                total += string.Format("{0}-format {1:N2} {2}", m, p.DecimalMarker, Pad(6_000)).Length; // ~6k
                // Interpolation with formatting (DefaultInterpolatedStringHandler).
                total += $"{m}-interp {p.IntMarker:X8} {p.DoubleMarker:F3} {Pad(200)}".Length;
                // StringBuilder (its chunks are its own arrays, not rented).
                var sb = new StringBuilder();
                sb.Append(m).Append("-builder ").Append(Pad(3_000));
                sb.AppendFormat("{0}-appendformat {1}", m, Pad(3_000));
                total += sb.ToString().Length;
                // LINQ over non-collection enumerables of value types (SegmentedArrayBuilder returns value-type segments uncleared).
                total += Repeat(p.IntMarker, 500).ToArray().Length;
                total += Repeat(p.LongMarker, 500).Where(x => x != 0).ToList().Count;
                total += Repeat(p.DoubleMarker, 500).OrderBy(x => x).ToArray().Length;
                total += Repeat(p.DecimalMarker, 500).Select(x => x).ToArray().Length;
                // Utf8JsonWriter and JsonSerializer with text that needs escaping.
                var buffer = new System.Buffers.ArrayBufferWriter<byte>();
                using (var w = new Utf8JsonWriter(buffer))
                {
                    w.WriteStartObject();
                    w.WriteString("k", m + "-writer \"\\\n" + Pad(12_000));
                    w.WriteEndObject();
                }
                total += buffer.WrittenCount;
                total += JsonSerializer.Serialize(new Dictionary<string, string> { ["k"] = m + "-serializer \"\t" + Pad(24_000) }).Length;
                total += JsonSerializer.SerializeToUtf8Bytes(new List<string> { m + "-utf8bytes \"\r" + Pad(50_000) }).Length;
                // Regex replace.
                total += Regex.Replace(m + "-regex " + Pad(4_000), "[.]", "x").Length;
                total += Encoding.UTF8.GetBytes(m + "-encoding " + Pad(6_000)).Length;
                // The state: the host serializes it, escaping the quote, backslash and control characters through the pools.
                s.Escaped = m + "-state \"\\\n\u0001" + Pad(700);
                s.Total += total;
                return s;
            }
        }
        """;

    /// <summary>Where each path leaves its marker (text paths: the marker and their suffix, in UTF-16 or UTF-8).</summary>
    static readonly string[] TextPaths =
        ["interp", "format", "builder", "appendformat", "join", "concat", "writer", "serializer", "utf8bytes", "regex", "encoding", "state"];

    /// <summary>Paths seen to leave their marker in the pools on .NET 10 when nothing clears them: the control asserts each.
    /// The others are planted too but were not seen there: StringBuilder (its chunks are not rented), Encoding.GetBytes and
    /// Regex.Replace (not through a pool, or overwritten), string.Format (its buffer's bucket is reused before the reader
    /// comes); the hygiene clears whatever they leave all the same.</summary>
    static readonly string[] PathsSeenInPools =
        ["interp", "number", "join", "concat", "int", "long", "double", "decimal", "writer", "serializer", "utf8bytes", "state"];

    sealed record Markers(string Text, int Int, long Long, double Double, decimal Decimal, string DecimalText)
    {
        public static Markers New()
        {
            var r = Random.Shared;
            var dec = r.NextInt64(1_000_000_000, 9_000_000_000) + 0.4321m;
            return new("MRK" + Guid.NewGuid().ToString("N")[..12], r.Next(0x10000000, 0x7fffffff), r.NextInt64(1L << 40, 1L << 60),
                r.Next(1, 1 << 30) + 0.123456789, dec, dec.ToString("N4", System.Globalization.CultureInfo.InvariantCulture));
        }

        /// <summary>Byte patterns to look for in any array's memory.</summary>
        public List<(string Path, byte[] Bytes)> Patterns()
        {
            var list = new List<(string, byte[])>();
            foreach (var path in TextPaths)
            {
                list.Add((path, Encoding.UTF8.GetBytes(Text + "-" + path)));
                list.Add((path, Encoding.Unicode.GetBytes(Text + "-" + path)));
            }
            list.Add(("number", Encoding.Unicode.GetBytes(DecimalText)));
            list.Add(("number", Encoding.UTF8.GetBytes(DecimalText)));
            list.Add(("int", BitConverter.GetBytes(Int)));
            list.Add(("long", BitConverter.GetBytes(Long)));
            list.Add(("double", BitConverter.GetBytes(Double)));
            list.Add(("decimal", MemoryMarshal.AsBytes(new[] { Decimal }.AsSpan()).ToArray())); // in-memory layout, not GetBits'
            return list;
        }
    }

    /// <summary>Element types the reader rents (its own list: not the hygiene's).</summary>
    static readonly Type[] ReaderTypes =
    [
        typeof(byte), typeof(sbyte), typeof(char), typeof(short), typeof(ushort), typeof(int), typeof(uint), typeof(long), typeof(ulong),
        typeof(float), typeof(double), typeof(decimal), typeof(Guid), typeof(object), typeof(string), typeof(ReadOnlyMemory<char>),
    ];

    sealed record Hit(string Path, string Pool, int Length, bool Fresh);

    [Fact]
    public void ThePoolInternalsAreWhereTheHygieneLooksInThisRuntime()
    {
        // The same check the host runs at start-up in exec mode (it exits with code 5 when it fails).
        PoolHygiene.SelfTest();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void NothingTenantALeavesInThePoolsIsReadableAfterTenantBsCall(bool inOneBatch)
    {
        var (hits, _) = PlantThenRead(inOneBatch, hygiene: true);
        var pooled = hits.Where(h => !h.Fresh).ToList();
        Assert.True(pooled.Count == 0, "tenant A's markers read from the pools after tenant B's call: " + Describe(pooled));
    }

    [Fact]
    public void WithoutTheHygieneTheReaderFindsTheMarkersOfEveryPathThatPools()
    {
        var (hits, _) = PlantThenRead(inOneBatch: true, hygiene: false);
        var found = hits.Where(h => !h.Fresh).Select(h => h.Path).ToHashSet();
        output.WriteLine("paths found in the pools without hygiene: " + string.Join(", ", found.Order()));
        Assert.All(PathsSeenInPools, path => Assert.Contains(path, found));
    }

    [Fact]
    public void CallsOfOneTenantInARowDoNotClearAndASwitchDoes()
    {
        var host = new InProcessHost(HostMode.All);
        var bank = Compiled(host, Repo.Example("bank-account"));
        Load(host, "a/bank", "tenant-a", bank);
        Load(host, "a/bank2", "tenant-a", bank);
        Load(host, "b/bank", "tenant-b", bank);
        Load(host, "legacy/bank", null, bank);
        var opened = Events.Array(Events.Make("AccountOpened", new { owner = "x" }));
        host.Apply("a/bank", "BankAccount.AccountReducer", (null, opened));
        var before = PoolHygiene.Switches;
        host.Apply("a/bank", "BankAccount.AccountReducer", (null, opened));
        host.Apply("a/bank2", "BankAccount.AccountReducer", (null, opened)); // another upload of the same tenant
        Assert.Equal(before, PoolHygiene.Switches);
        host.Apply("b/bank", "BankAccount.AccountReducer", (null, opened));
        Assert.Equal(before + 1, PoolHygiene.Switches);
        host.Apply("legacy/bank", "BankAccount.AccountReducer", (null, opened)); // loaded without a tenant: its own domain
        Assert.Equal(before + 2, PoolHygiene.Switches);
    }

    [Fact]
    public void WhenCallsMoveToAnotherThreadThePreviousThreadsSlotsAreEmptied()
    {
        // Thread X runs a call of tenant A and leaves an array in its own slot; the next call, of tenant B, runs here.
        byte[]? planted = null, rentedAfter = null;
        using var plantedDone = new ManualResetEventSlim();
        using var readNow = new ManualResetEventSlim();
        var x = new Thread(() =>
        {
            PoolHygiene.Enter(PoolHygiene.DomainOf("thread-tenant-a", "a/x"));
            planted = ArrayPool<byte>.Shared.Rent(3000);
            planted.AsSpan().Fill(0x5A);
            ArrayPool<byte>.Shared.Return(planted); // into X's slot of that bucket
            plantedDone.Set();
            readNow.Wait();
            rentedAfter = ArrayPool<byte>.Shared.Rent(3000); // X's slot first: the planted array, unless emptied
            ArrayPool<byte>.Shared.Return(rentedAfter);
        });
        x.Start();
        Assert.True(plantedDone.Wait(TimeSpan.FromSeconds(30)));
        PoolHygiene.Enter(PoolHygiene.DomainOf("thread-tenant-b", "b/y"));
        readNow.Set();
        Assert.True(x.Join(TimeSpan.FromSeconds(30)));
        Assert.NotSame(planted, rentedAfter);
    }

    [Fact]
    public void ALoadNamingAnEmptyTenantIsABadRequest()
    {
        var host = new InProcessHost(HostMode.All);
        var envelope = host.Send("load", new JsonObject { ["assemblyId"] = "x", ["assembly"] = "AAAA", ["tenantId"] = "" });
        Assert.Equal("BAD_REQUEST", envelope["payload"]!["code"]!.GetValue<string>());
    }

    (List<Hit> Hits, Markers Markers) PlantThenRead(bool inOneBatch, bool hygiene)
    {
        var host = new InProcessHost(HostMode.All);
        Load(host, "tenant-a/planter", "tenant-a", Compiled(host, [new("Planter.cs", PlanterSource)]));
        Load(host, "tenant-b/bank", "tenant-b", Compiled(host, Repo.Example("bank-account")));
        var markers = Markers.New();
        var plant = Events.Make("Planted", new
        {
            marker = markers.Text, intMarker = markers.Int, longMarker = markers.Long, doubleMarker = markers.Double,
            decimalMarker = markers.Decimal,
        });
        var bEvents = Events.Array(Events.Make("AccountOpened", new { owner = "bob" }));
        var patterns = markers.Patterns();
        PoolHygiene.Enabled = hygiene;
        try
        {
            // Something of tenant B's ran last (so A's call is a switch too, as in a busy executor).
            host.Apply("tenant-b/bank", "BankAccount.AccountReducer", (null, bEvents));
            if (!inOneBatch)
            {
                var planted = host.Apply("tenant-a/planter", "Planter.PlantReducer", (null, Events.Array(plant)));
                Assert.True(planted[0]!["ok"]!.GetValue<bool>(), planted.ToJsonString());
                Assert.True(host.Apply("tenant-b/bank", "BankAccount.AccountReducer", (null, bEvents))[0]!["ok"]!.GetValue<bool>());
                return (Read(patterns), markers);
            }
            // A's item then B's item in one batch: the reader runs as B's item line goes out, inside the batch.
            List<Hit>? hits = null;
            var sink = host.Dispatcher.ItemSink;
            var (items, final) = host.Batch(new JsonArray(
                ApplyItem("tenant-a/planter", "Planter.PlantReducer", Events.Array(plant)),
                ApplyItem("tenant-b/bank", "BankAccount.AccountReducer", bEvents)), onItem: index =>
            {
                if (index == 1) hits = Read(patterns);
            });
            Assert.Equal("result", final["type"]!.GetValue<string>());
            Assert.True(items[0]["result"]!["results"]![0]!["ok"]!.GetValue<bool>(), items[0].ToJsonString());
            Assert.True(items[1]["result"]!["results"]![0]!["ok"]!.GetValue<bool>(), items[1].ToJsonString());
            return (hits!, markers);
        }
        finally
        {
            PoolHygiene.Enabled = true;
        }
    }

    /// <summary>Rents every bucket of every reader type until the pool hands out a fresh array (the bucket is then empty),
    /// scans each, and returns the pooled ones. A fresh array is told by this thread's allocation counter; its content
    /// is reported (stale heap in a <c>GC.AllocateUninitializedArray</c>, what the hygiene cannot clear) but not pooled.</summary>
    List<Hit> Read(List<(string Path, byte[] Bytes)> patterns)
    {
        var hits = new List<Hit>();
        var method = typeof(PoolHygieneTests).GetMethod(nameof(ReadPool), BindingFlags.NonPublic | BindingFlags.Static)!;
        foreach (var type in ReaderTypes) method.MakeGenericMethod(type).Invoke(null, [patterns, hits]);
        foreach (var fresh in hits.Where(h => h.Fresh))
            output.WriteLine($"stale heap, not pooled: {fresh.Path} in a fresh {fresh.Pool}[{fresh.Length}]");
        return hits;
    }

    static void ReadPool<T>(List<(string Path, byte[] Bytes)> patterns, List<Hit> hits)
    {
        var pool = ArrayPool<T>.Shared;
        var pooled = new List<T[]>();
        for (var size = 16; size <= 1 << 18; size *= 2)
        {
            while (true)
            {
                var allocated = GC.GetAllocatedBytesForCurrentThread();
                var array = pool.Rent(size);
                var fresh = GC.GetAllocatedBytesForCurrentThread() - allocated >= (long)size * Unsafe.SizeOf<T>();
                foreach (var path in Scan(array, patterns)) hits.Add(new Hit(path, $"ArrayPool<{typeof(T).Name}>", array.Length, fresh));
                if (fresh) break; // dropped, not returned: the next reader would see it again
                pooled.Add(array);
                if (pooled.Count > 100_000) throw new InvalidOperationException("the pool never ran dry");
            }
        }
        foreach (var array in pooled) pool.Return(array);
    }

    static HashSet<string> Scan<T>(T[] array, List<(string Path, byte[] Bytes)> patterns)
    {
        if (!RuntimeHelpers.IsReferenceOrContainsReferences<T>())
        {
            var bytes = MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<T, byte>(ref MemoryMarshal.GetArrayDataReference(array)), array.Length * Unsafe.SizeOf<T>());
            var paths = new HashSet<string>();
            foreach (var (path, pattern) in patterns)
                if (bytes.IndexOf(pattern) >= 0) paths.Add(path);
            return paths;
        }
        // References: a string (or memory over one) of A's holding a marker; any non-null slot hands over an object.
        var found = new HashSet<string>();
        foreach (var item in array)
        {
            var text = item?.ToString();
            if (text is null) continue;
            var utf8 = Encoding.UTF8.GetBytes(text);
            foreach (var p in patterns)
                if (utf8.AsSpan().IndexOf(p.Bytes) >= 0) found.Add(p.Path);
        }
        return found;
    }

    static string Describe(IEnumerable<Hit> hits) =>
        string.Join("; ", hits.GroupBy(h => h.Path).Select(g => $"{g.Key} in {string.Join(", ", g.Select(h => $"{h.Pool}[{h.Length}]").Distinct())}"));

    static JsonObject ApplyItem(string assemblyId, string className, JsonArray events) => new()
    {
        ["op"] = "apply",
        ["assemblyId"] = assemblyId,
        ["className"] = className,
        ["groups"] = new JsonArray(new JsonObject { ["state"] = null, ["events"] = events }),
    };

    static string Compiled(InProcessHost host, IEnumerable<EventSourcing.Runtime.Compilation.SourceFile> files)
    {
        var compiled = host.Compile(files);
        Assert.True(compiled["ok"]!.GetValue<bool>(), compiled["compilationError"]?.GetValue<string>());
        return compiled["assembly"]!.GetValue<string>();
    }

    static void Load(InProcessHost host, string assemblyId, string? tenant, string assembly)
    {
        var payload = new JsonObject { ["assemblyId"] = assemblyId, ["assembly"] = assembly };
        if (tenant is not null) payload["tenantId"] = tenant;
        Assert.True(host.Result("load", payload)["ok"]!.GetValue<bool>());
    }
}
