using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>IDeletableProjection: a key's state removed after an event (JSON null), the next event starting from new TState().</summary>
public sealed class DeletableProjectionTests
{
    const string Carts = "Shop.OpenCarts";

    const string Source = """
        using EventSourcing;
        namespace Shop
        {
            public sealed class Cart { public int Items { get; set; } }
            public sealed class OpenCarts : IProjection<Cart>, IDeletableProjection<Cart>
            {
                public string? ResolveKey(Event e) => e.AggregateId;
                public Cart Apply(Cart c, Event e) { if (e.EventType == "ItemAdded") c.Items++; return c; }
                public bool ShouldDelete(Cart c, Event e) => e.EventType == "CartCheckedOut" || (e.EventType == "Boom" && c.Items > Throw());
                static int Throw() => throw new System.InvalidOperationException("no");
            }
            public sealed class Once
            {
                public Once() => throw new System.InvalidOperationException("no new state");
                [System.Text.Json.Serialization.JsonConstructor]
                public Once(int items) => Items = items;
                public int Items { get; set; }
            }
            public sealed class NoSecondState : IProjection<Once>, IDeletableProjection<Once>
            {
                public string? ResolveKey(Event e) => e.AggregateId;
                public Once Apply(Once c, Event e) => c;
                public bool ShouldDelete(Once c, Event e) => true;
            }
            public sealed class KeepsNull : IProjection<Cart>
            {
                public string? ResolveKey(Event e) => e.AggregateId;
                public Cart Apply(Cart c, Event e) => e.EventType == "CartCheckedOut" ? null! : c;
            }
        }
        """;

    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    [Fact]
    public void ARemovedKeyIsJsonNullAndItsNextEventStartsFromANewState()
    {
        _host.CompileAndLoad("carts", [new SourceFile("Carts.cs", Source)]);
        var results = _host.ApplyRaw("carts", Carts, (JsonNode.Parse("""{"items":4}"""), Events.Array(
            Events.Make("ItemAdded", new { }),
            Events.Make("CartCheckedOut", new { }),
            Events.Make("ItemAdded", new { }))));
        var states = results[0]!["states"]!.AsArray().Select(s => s!.GetValue<string>()).ToArray();
        Assert.Equal(["{\"items\":5}", "null", "{\"items\":1}"], states);
        Assert.True(results[0]!["ok"]!.GetValue<bool>());
    }

    [Fact]
    public void TheLastStateOnlyOfAGroupEndingInARemovalIsNull()
    {
        _host.CompileAndLoad("carts", [new SourceFile("Carts.cs", Source)]);
        var payload = new JsonObject
        {
            ["assemblyId"] = "carts",
            ["className"] = Carts,
            ["groups"] = new JsonArray(new JsonObject
            {
                ["state"] = null,
                ["events"] = Events.Array(Events.Make("ItemAdded", new { }), Events.Make("CartCheckedOut", new { })),
                ["lastStateOnly"] = true,
            }),
        };
        var result = _host.Result("apply", payload)["results"]![0]!;
        Assert.Equal(["null"], result["states"]!.AsArray().Select(s => s!.GetValue<string>()));
    }

    [Fact]
    public void AStateWhoseConverterWritesNullIsRefusedSinceNullIsOnlyARemoval()
    {
        var corpus = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "deletable-null-state-converter.cs"));
        _host.CompileAndLoad("nulls", [new SourceFile("Nulls.cs", corpus)]);
        var result = _host.ApplyRaw("nulls", "Escape.EscapeProjection", (null, Events.Array(Events.Make("Anything", new { }))))[0]!;
        Assert.False(result["ok"]!.GetValue<bool>());
        Assert.Equal("STATE_SERIALIZATION_FAILED", result["error"]!["code"]!.GetValue<string>());
        Assert.Contains("IDeletableProjection", result["error"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void ANewStateAfterARemovalThatThrowsFailsThatEvent()
    {
        _host.CompileAndLoad("carts", [new SourceFile("Carts.cs", Source)]);
        var result = _host.ApplyRaw("carts", "Shop.NoSecondState", (JsonNode.Parse("""{"items":1}"""), Events.Array(Events.Make("CartCheckedOut", new { }))))[0]!;
        Assert.False(result["ok"]!.GetValue<bool>());
        Assert.Equal("APPLY_FAILED", result["error"]!["code"]!.GetValue<string>());
        Assert.Contains("no new state", result["error"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void AThrowingShouldDeleteFailsItsEventAndAProjectionWithoutTheMarkerStillFailsOnNull()
    {
        _host.CompileAndLoad("carts", [new SourceFile("Carts.cs", Source)]);
        var thrown = _host.ApplyRaw("carts", Carts, (null, Events.Array(Events.Make("ItemAdded", new { }), Events.Make("Boom", new { }))))[0]!;
        Assert.False(thrown["ok"]!.GetValue<bool>());
        Assert.Equal(1, thrown["failedIndex"]!.GetValue<int>());
        Assert.Equal("APPLY_FAILED", thrown["error"]!["code"]!.GetValue<string>());
        var unchanged = _host.ApplyRaw("carts", "Shop.KeepsNull", (null, Events.Array(Events.Make("CartCheckedOut", new { }))))[0]!;
        Assert.False(unchanged["ok"]!.GetValue<bool>());
        Assert.Contains("Apply returned null", unchanged["error"]!["message"]!.GetValue<string>());
    }
}
