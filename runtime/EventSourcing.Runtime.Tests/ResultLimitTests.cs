using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>States and keys over the caller's limits are refused in the host, before they reach the response.</summary>
public class ResultLimitTests
{
    const string Grow = "Big.GrowReducer";
    const string Keys = "Keys.KeysProjection";

    /// <summary>Each event sets the state to a string of data.chars characters (data.escaped: quotes, 6 bytes each in JSON).</summary>
    const string GrowSource = """
        using EventSourcing;
        namespace Big
        {
            public sealed class Blob { public string Text { get; set; } = ""; public int Count { get; set; } }
            public sealed class GrowReducer : IReducer<Blob>
            {
                public Blob Apply(Blob state, Event e)
                {
                    var c = e.Data.GetProperty("escaped").GetBoolean() ? '\u0001' : 'x';
                    state.Text = new string(c, e.Data.GetProperty("chars").GetInt32());
                    state.Count++;
                    return state;
                }
            }
        }
        """;

    const string KeysSource = """
        using EventSourcing;
        namespace Keys
        {
            public sealed class Count { public int N { get; set; } }
            public sealed class KeysProjection : IProjection<Count>
            {
                public string? ResolveKey(Event e) => e.EventType == "Huge" ? new string('k', e.Data.GetProperty("chars").GetInt32()) : e.AggregateId;
                public Count Apply(Count s, Event e) { s.N++; return s; }
            }
        }
        """;

    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    JsonArray Apply(int? maxStateBytes, bool lastOnly, params JsonObject[] events) => Apply(maxStateBytes, lastOnly, null, events);

    JsonArray Apply(int? maxStateBytes, bool lastOnly, int? maxResultBytes, params JsonObject[] events)
    {
        var payload = new JsonObject
        {
            ["assemblyId"] = "grow",
            ["className"] = Grow,
            ["groups"] = new JsonArray(new JsonObject { ["state"] = null, ["events"] = Events.Array(events), ["lastStateOnly"] = lastOnly }),
        };
        if (maxStateBytes is { } m) payload["maxStateBytes"] = m;
        if (maxResultBytes is { } r) payload["maxResultBytes"] = r;
        var results = _host.Result("apply", payload)["results"]!.AsArray();
        foreach (var result in results) InProcessHost.ParseStates(result!.AsObject());
        return results;
    }

    static JsonObject Chars(int n, bool escaped = false) => Events.Make("Grow", new { chars = n, escaped });

    [Fact]
    public void AStateOverTheCapFailsItsEventWithStateTooLargeAndKeepsTheStatesBefore()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        var r = Apply(1000, false, Chars(10), Chars(900), Chars(2000), Chars(5)).Single()!;
        Assert.False(r["ok"]!.GetValue<bool>());
        Assert.Equal(2, r["failedIndex"]!.GetValue<int>());
        Assert.Equal(2, r["states"]!.AsArray().Count);
        Assert.Equal(900, r["states"]![1]!["text"]!.GetValue<string>().Length);
        var error = r["error"]!;
        Assert.Equal("STATE_TOO_LARGE", error["code"]!.GetValue<string>());
        Assert.Equal(1000, error["limit"]!.GetValue<int>());
        // {"text":"…","count":3} is 21 bytes around the text.
        Assert.Contains("is 2,021 bytes of JSON; the limit is 1,000 bytes", error["message"]!.GetValue<string>());
        Assert.Null(error["stackTrace"]);
    }

    [Fact]
    public void AHugeStateStopsSerializingEarlyInsteadOfBeingBuiltWhole()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        // 40 M characters would be 40 MB of JSON; the writer gives up long before that.
        var r = Apply(1 << 20, false, Chars(40 << 20)).Single()!;
        Assert.Equal("STATE_TOO_LARGE", r["error"]!["code"]!.GetValue<string>());
        // Known from below: the 40 M character string alone needs 40 MiB.
        Assert.Matches(@"at least 41,94\d,\d{3} bytes of JSON", r["error"]!["message"]!.GetValue<string>());
        Assert.Contains("the limit is 1,048,576 bytes", r["error"]!["message"]!.GetValue<string>());
        Assert.Empty(r["states"]!.AsArray());
    }

    [Fact]
    public void EscapingCountsAtItsRealSize()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        // 300 control characters are 1,800 bytes of JSON (\u0001 each): over 1,000 though 300 < 1,000.
        var over = Apply(1000, false, Chars(300, escaped: true)).Single()!;
        Assert.Equal("STATE_TOO_LARGE", over["error"]!["code"]!.GetValue<string>());
        var under = Apply(2000, false, Chars(300, escaped: true)).Single()!;
        Assert.True(under["ok"]!.GetValue<bool>(), under.ToJsonString());
    }

    [Fact]
    public void AStateJustUnderTheCapPasses()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        // {"text":"…","count":1} is 21 bytes around the text.
        var exact = Apply(100_021, false, Chars(100_000)).Single()!;
        Assert.True(exact["ok"]!.GetValue<bool>(), exact["error"]?.ToJsonString());
        var oneOver = Apply(100_020, false, Chars(100_000)).Single()!;
        Assert.Equal("STATE_TOO_LARGE", oneOver["error"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void WithoutALimitInTheRequestTheDefaultIsOneMebibyte()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        Assert.True(Apply(null, false, Chars(1_000_000)).Single()!["ok"]!.GetValue<bool>());
        var r = Apply(null, false, Chars(1 << 20)).Single()!;
        Assert.Equal(1 << 20, r["error"]!["limit"]!.GetValue<int>());
    }

    [Fact]
    public void LastStateOnlyWritesOneStateButChecksEveryOne()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        var ok = Apply(1000, true, Chars(1), Chars(2), Chars(3)).Single()!;
        Assert.True(ok["ok"]!.GetValue<bool>());
        var states = ok["states"]!.AsArray();
        Assert.Single(states);
        Assert.Equal(3, states[0]!["count"]!.GetValue<int>());

        // An intermediate state over the cap fails its event even though it would not be written;
        // the state before it (whole, though the failed one was serialized after it) is the one given.
        var failed = Apply(1000, true, Chars(1), Chars(7), Chars(5000), Chars(3)).Single()!;
        Assert.Equal(2, failed["failedIndex"]!.GetValue<int>());
        Assert.Equal("STATE_TOO_LARGE", failed["error"]!["code"]!.GetValue<string>());
        var before = failed["states"]!.AsArray().Single()!;
        Assert.Equal(7, before["text"]!.GetValue<string>().Length);
        Assert.Equal(2, before["count"]!.GetValue<int>());
    }

    [Fact]
    public void AResponseOfManyBigStatesIsCutShortAfterTheBudgetButAlwaysMakesProgress()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        JsonObject[] Ten() => Enumerable.Range(0, 10).Select(_ => Chars(1000)).ToArray();
        var r = Apply(2000, false, 3500, Ten()).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>());
        Assert.True(r["truncated"]!.GetValue<bool>());
        // ~1 KB each: three fit in 3,500 bytes of response, the fourth would not.
        Assert.Equal(3, r["states"]!.AsArray().Count);

        var tiny = Apply(2000, false, 10, Chars(1000), Chars(1000)).Single()!;
        Assert.Single(tiny["states"]!.AsArray()); // the first state of a group always goes
        Assert.True(tiny["truncated"]!.GetValue<bool>());

        var whole = Apply(2000, false, 100_000, Ten()).Single()!;
        Assert.Null(whole["truncated"]);
        Assert.Equal(10, whole["states"]!.AsArray().Count);
        var lastOnly = Apply(2000, true, 10, Ten()).Single()!;
        Assert.Null(lastOnly["truncated"]);
        Assert.Equal(10, lastOnly["states"]![0]!["count"]!.GetValue<int>());
    }

    [Fact]
    public void ABadLimitIsABadRequest()
    {
        _host.CompileAndLoad("grow", [new SourceFile("Grow.cs", GrowSource)]);
        var payload = new JsonObject { ["assemblyId"] = "grow", ["className"] = Grow, ["maxStateBytes"] = -1, ["groups"] = new JsonArray() };
        Assert.Equal("BAD_REQUEST", _host.Send("apply", payload)["payload"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void KeysOverTheLimitAreRefusedPerEventAndNeverWritten()
    {
        _host.CompileAndLoad("keys", [new SourceFile("Keys.cs", KeysSource)]);
        var events = Events.Array(
            Events.Make("Normal", new { }, aggregateId: "a-1"),
            Events.Make("Huge", new { chars = 10 << 20 }),
            Events.Make("Huge", new { chars = 101 }),
            Events.Make("Huge", new { chars = 100 }),
            Events.Make("Normal", new { }, aggregateId: "a-2"));
        var response = _host.Send("resolveKeys", new JsonObject { ["assemblyId"] = "keys", ["className"] = Keys, ["events"] = events, ["maxKeyLength"] = 100 });
        Assert.True(response.ToJsonString().Length < 10_000, "the 10 M character key must not be in the response");
        var keys = response["payload"]!["keys"]!.AsArray();
        Assert.Equal("a-1", keys[0]!.GetValue<string>());
        Assert.Equal("KEY_TOO_LONG", keys[1]!["error"]!["code"]!.GetValue<string>());
        Assert.Contains("10,485,760 characters", keys[1]!["error"]!["message"]!.GetValue<string>());
        Assert.Equal(100, keys[1]!["error"]!["limit"]!.GetValue<int>());
        Assert.Equal("KEY_TOO_LONG", keys[2]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal(100, keys[3]!.GetValue<string>().Length);
        Assert.Equal("a-2", keys[4]!.GetValue<string>());
    }

    [Fact]
    public void WithoutAKeyLimitInTheRequestTheDefaultIs1024()
    {
        _host.CompileAndLoad("keys", [new SourceFile("Keys.cs", KeysSource)]);
        var events = Events.Array(Events.Make("Huge", new { chars = 1024 }), Events.Make("Huge", new { chars = 1025 }));
        var keys = _host.Result("resolveKeys", new JsonObject { ["assemblyId"] = "keys", ["className"] = Keys, ["events"] = events })["keys"]!.AsArray();
        Assert.Equal(1024, keys[0]!.GetValue<string>().Length);
        Assert.Equal("KEY_TOO_LONG", keys[1]!["error"]!["code"]!.GetValue<string>());
    }
}
