using System.Text.Json.Nodes;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>The batch request: several tenants' calls waiting for one shared executor, carried in one round trip.</summary>
public class BatchTests
{
    static JsonObject ApplyItem(string assemblyId, string className, JsonArray events, JsonNode? state = null) => new()
    {
        ["op"] = "apply",
        ["assemblyId"] = assemblyId,
        ["className"] = className,
        ["groups"] = new JsonArray(new JsonObject { ["state"] = state, ["events"] = events }),
    };

    static JsonObject Opened(string owner) => Events.Make("AccountOpened", new { owner });

    [Fact]
    public void ItemsOfSeveralAssembliesAreAnsweredOneLineEachInOrderThenTheResult()
    {
        var host = new InProcessHost(HostMode.All);
        // Two tenants uploading the same sources: the same assembly (same name, same bytes) in two load contexts.
        host.CompileAndLoad("tenant-1/bank", Repo.Example("bank-account"));
        host.CompileAndLoad("tenant-2/bank", Repo.Example("bank-account"));
        const string Reducer = "BankAccount.AccountReducer";

        var (items, final) = host.Batch(new JsonArray(
            ApplyItem("tenant-1/bank", Reducer, Events.Array(Opened("ann"))),
            ApplyItem("tenant-2/bank", Reducer, Events.Array(Opened("bob"), Events.Make("MoneyDeposited", new { amount = 5 }))),
            new JsonObject { ["op"] = "resolveKeys", ["assemblyId"] = "tenant-1/bank", ["className"] = Reducer, ["events"] = Events.Array(Opened("x")) },
            ApplyItem("tenant-3/missing", Reducer, Events.Array(Opened("cy"))),
            new JsonObject { ["op"] = "compile", ["assemblyId"] = "tenant-1/bank", ["className"] = Reducer },
            ApplyItem("tenant-1/bank", Reducer, Events.Array(Events.Make("MoneyWithdrawn", new { amount = 1 })))));

        Assert.Equal("result", final["type"]!.GetValue<string>());
        Assert.Equal(6, final["payload"]!["items"]!.GetValue<int>());
        Assert.Equal(new[] { 0, 1, 2, 3, 4, 5 }, items.Select(i => i["index"]!.GetValue<int>()));

        string State(JsonObject item, int n) => item["result"]!["results"]![0]!["states"]![n]!.GetValue<string>();
        Assert.Contains("\"owner\":\"ann\"", State(items[0], 0));
        Assert.Contains("\"owner\":\"bob\"", State(items[1], 0));
        Assert.Contains("\"balance\":5", State(items[1], 1));
        // An item that fails as a whole says why and leaves its neighbours alone.
        Assert.Equal("NOT_A_PROJECTION", items[2]["error"]!["code"]!.GetValue<string>());
        Assert.Equal("ASSEMBLY_NOT_LOADED", items[3]["error"]!["code"]!.GetValue<string>());
        Assert.Equal("BAD_REQUEST", items[4]["error"]!["code"]!.GetValue<string>());
        Assert.Equal("APPLY_FAILED", items[5]["result"]!["results"]![0]!["error"]!["code"]!.GetValue<string>());

        var stats = host.Result("stats");
        Assert.Equal(1, stats["batches"]!.GetValue<int>());
        Assert.Equal(6, stats["batchItems"]!.GetValue<int>());
    }

    [Fact]
    public void ABatchWithoutItemsIsABadRequest()
    {
        var envelope = new InProcessHost(HostMode.Exec).Send("batch", new JsonObject());
        Assert.Equal("error", envelope["type"]!.GetValue<string>());
        Assert.Equal("BAD_REQUEST", envelope["payload"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void TheLimitsOfEachItemApply()
    {
        var host = new InProcessHost(HostMode.All);
        host.CompileAndLoad("t/bank", Repo.Example("bank-account"));
        var item = ApplyItem("t/bank", "BankAccount.AccountReducer", Events.Array(Opened(new string('x', 200))));
        item["maxStateBytes"] = 64;
        var (items, _) = host.Batch(new JsonArray(item, ApplyItem("t/bank", "BankAccount.AccountReducer", Events.Array(Opened("ok")))));
        Assert.Equal("STATE_TOO_LARGE", items[0]["result"]!["results"]![0]!["error"]!["code"]!.GetValue<string>());
        Assert.True(items[1]["result"]!["results"]![0]!["ok"]!.GetValue<bool>());
    }
}
