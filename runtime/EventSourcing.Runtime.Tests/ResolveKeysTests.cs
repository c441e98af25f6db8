using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>IResolveKeys: one event, several keys (an array in resolveKeys' answer).</summary>
public sealed class ResolveKeysTests
{
    const string Skus = "Inventory.SkuProjection";

    /// <summary>OrderPlaced: one key per line's SKU; Many: data.n keys; NullKey: a null in the list; Long: one key of 2,000 characters.</summary>
    const string Source = """
        using System.Collections.Generic;
        using System.Linq;
        using EventSourcing;
        namespace Inventory
        {
            public sealed class Stock { public int Sold { get; set; } }
            public sealed class SkuProjection : IProjection<Stock>, IResolveKeys<Stock>
            {
                public string? ResolveKey(Event e) => null;
                public IReadOnlyList<string>? ResolveKeys(Event e) => e.EventType switch
                {
                    "OrderPlaced" => e.Data.GetProperty("lines").EnumerateArray().Select(l => l.GetProperty("sku").GetString()!).ToList(),
                    "Many" => Enumerable.Range(0, e.Data.GetProperty("n").GetInt32()).Select(i => "k" + i).ToList(),
                    "NullKey" => new string?[] { "a", null }!,
                    "Long" => new[] { "a", new string('x', 2000) },
                    "Empty" => new List<string>(),
                    _ => null,
                };
                public Stock Apply(Stock s, Event e) { s.Sold++; return s; }
                public Stock Apply(string key, Stock s, Event e)
                {
                    foreach (var l in e.Data.GetProperty("lines").EnumerateArray())
                        if (l.GetProperty("sku").GetString() == key) s.Sold += l.GetProperty("qty").GetInt32();
                    return s;
                }
            }
        }
        """;

    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    JsonArray Resolve(params JsonObject[] events) =>
        _host.Result("resolveKeys", new JsonObject { ["assemblyId"] = "skus", ["className"] = Skus, ["events"] = Events.Array(events) })["keys"]!.AsArray();

    [Fact]
    public void AnEventResolvesToEachOfItsKeysInAnArrayAndOtherAnswersAreUnchanged()
    {
        _host.CompileAndLoad("skus", [new SourceFile("Skus.cs", Source)]);
        var keys = Resolve(
            Events.Make("OrderPlaced", new { lines = new[] { new { sku = "s-1" }, new { sku = "s-2" }, new { sku = "s-3" } } }),
            Events.Make("Other", new { }),
            Events.Make("Empty", new { }),
            Events.Make("Many", new { n = 1024 }));
        Assert.Equal(["s-1", "s-2", "s-3"], keys[0]!.AsArray().Select(k => k!.GetValue<string>()));
        Assert.Empty(keys[1]!.AsArray());
        Assert.Empty(keys[2]!.AsArray());
        Assert.Equal(1024, keys[3]!.AsArray().Count);
    }

    [Fact]
    public void TooManyKeysANullKeyOrATooLongKeyFailOnlyTheirEvent()
    {
        _host.CompileAndLoad("skus", [new SourceFile("Skus.cs", Source)]);
        var keys = Resolve(
            Events.Make("Many", new { n = 1025 }),
            Events.Make("NullKey", new { }),
            Events.Make("Long", new { }),
            Events.Make("OrderPlaced", new { lines = new[] { new { sku = "s-9" } } }));
        Assert.Equal("RESOLVE_FAILED", keys[0]!["error"]!["code"]!.GetValue<string>());
        Assert.Contains("1,025 keys", keys[0]!["error"]!["message"]!.GetValue<string>());
        Assert.Equal("RESOLVE_FAILED", keys[1]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal("KEY_TOO_LONG", keys[2]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal(["s-9"], keys[3]!.AsArray().Select(k => k!.GetValue<string>()));
    }

    [Fact]
    public void AGroupWithAKeyIsAppliedWithThatKeyAndWithoutOneAsBefore()
    {
        _host.CompileAndLoad("skus", [new SourceFile("Skus.cs", Source)]);
        var order = Events.Make("OrderPlaced", new { lines = new[] { new { sku = "s-1", qty = 2 }, new { sku = "s-2", qty = 5 } } });
        JsonObject Group(string? key)
        {
            var g = new JsonObject { ["state"] = null, ["events"] = Events.Array(order.DeepClone().AsObject()) };
            if (key is not null) g["key"] = key;
            return g;
        }
        var results = _host.Result("apply", new JsonObject
        {
            ["assemblyId"] = "skus",
            ["className"] = Skus,
            ["groups"] = new JsonArray(Group("s-1"), Group("s-2"), Group(null)),
        })["results"]!.AsArray();
        int Sold(int i) => JsonNode.Parse(results[i]!["states"]![0]!.GetValue<string>())!["sold"]!.GetValue<int>();
        Assert.Equal(2, Sold(0));
        Assert.Equal(5, Sold(1));
        Assert.Equal(1, Sold(2)); // no key: the one-key Apply
    }
}
