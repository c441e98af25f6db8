extern alias testkit;

using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;
using testkit::EventSourcing.Testing;
using EventSourcing.Runtime.Tests.KitFixtures;

namespace EventSourcing.Runtime.Tests;

/// <summary>EventSourcing.Sdk.Testing (sdk/testing) against the host itself: the same reducer source, compiled into
/// these tests for the kit and by the host from its text, gives the same state JSON batch for batch.</summary>
public class TestKitTests
{
    const string ClassName = "EventSourcing.Runtime.Tests.KitFixtures.KitLedgerReducer";
    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    public TestKitTests()
    {
        var dir = Path.Combine(Repo.Runtime, "EventSourcing.Runtime.Tests", "KitFixtures");
        _host.CompileAndLoad("kit", Directory.GetFiles(dir, "*.cs").Order(StringComparer.Ordinal).Select(f => new SourceFile(Path.GetFileName(f), File.ReadAllText(f))));
    }

    static readonly object[] Data =
    [
        new { amount = 10.50m, note = "é<" },
        new { Amount = "2", note = "\"&" },
        new { amount = 0.25m, note = "→" },
    ];

    /// <summary>The host's state JSON after the batches, each starting from the JSON the one before left.</summary>
    string HostFolds(params object[][] batches)
    {
        JsonNode? state = null;
        string? json = null;
        foreach (var batch in batches)
        {
            var events = Events.Array(batch.Select((d, i) => Events.Make("EntryAdded", d, aggregateId: "ledger-1", aggregateType: "ledger", version: i + 1)).ToArray());
            var result = _host.ApplyRaw("kit", ClassName, (state, events)).Single()!;
            Assert.True(result["ok"]!.GetValue<bool>(), result.ToJsonString());
            json = result["states"]!.AsArray()[^1]!.GetValue<string>();
            state = JsonNode.Parse(json);
        }
        return json!;
    }

    static Event[] KitEvents(EventStream stream, params object[] data) => data.Select(d => stream.Next("EntryAdded", d)).ToArray();

    [Fact]
    public void OneBatchGivesTheHostsJson()
    {
        var kit = ReducerSpec<KitLedgerReducer, LedgerState>.Given(KitEvents(new EventStream("ledger", "ledger-1"), Data)).ThenJson();
        Assert.Equal(HostFolds(Data), kit);
        Assert.Equal("""{"total":12.75,"notes":"é<\"&→","appliedSinceRead":3,"callsOnInstance":3}""", kit);
    }

    [Fact]
    public void BatchesRoundTripThroughJsonAsOnTheHost()
    {
        var stream = new EventStream("ledger", "ledger-1");
        var kit = ReducerSpec<KitLedgerReducer, LedgerState>
            .Given(KitEvents(stream, Data[0], Data[1]))
            .When(KitEvents(stream, Data[2]))
            .ThenJson();
        Assert.Equal(HostFolds([Data[0], Data[1]], [Data[2]]), kit);
        // The private setter was not read back and the reducer instance is new: both count only the last batch.
        Assert.Equal("""{"total":12.75,"notes":"é<\"&→","appliedSinceRead":1,"callsOnInstance":1}""", kit);
        var state = ReducerSpec<KitLedgerReducer, LedgerState>.Given(KitEvents(new EventStream("ledger", "ledger-1"), Data)).Then();
        Assert.Equal(0, state.AppliedSinceRead); // the state as read back from its JSON
    }

    [Fact]
    public void AThrowingApplyFailsAsOnTheHost()
    {
        var overdraft = new { amount = -20m, note = "" };
        var events = Events.Array(Events.Make("EntryAdded", Data[0], aggregateId: "ledger-1"), Events.Make("EntryAdded", overdraft, aggregateId: "ledger-1", version: 2));
        var host = _host.Apply("kit", ClassName, (null, events)).Single()!;
        Assert.False(host["ok"]!.GetValue<bool>());
        Assert.Equal(ErrorCodes.ApplyFailed, host["error"]!["code"]!.GetValue<string>());

        var stream = new EventStream("ledger", "ledger-1");
        var thrown = ReducerSpec<KitLedgerReducer, LedgerState>.Given(KitEvents(stream, Data[0])).When(KitEvents(stream, overdraft)).ThenFails<InvalidOperationException>();
        Assert.Equal(host["error"]!["message"]!.GetValue<string>(), thrown.Message);
        Assert.Equal(host["error"]!["exceptionType"]!.GetValue<string>(), thrown.GetType().FullName);

        var failed = Assert.Throws<ApplyFailedException>(() => ReducerSpec<KitLedgerReducer, LedgerState>.Given(KitEvents(new EventStream("ledger", "ledger-1"), Data[0], overdraft)).Then());
        Assert.Equal("APPLY_FAILED", failed.Code);
        Assert.Equal(2, failed.FailedEvent!.Version);
    }
}
