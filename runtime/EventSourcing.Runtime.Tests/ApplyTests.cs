using System.Text.Json.Nodes;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

public class ApplyTests
{
    const string Account = "BankAccount.AccountReducer";
    const string Order = "Orders.OrderReducer";
    const string Totals = "CustomerTotals.CustomerTotalsProjection";

    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    static void AssertJson(string expected, JsonNode? actual) =>
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(expected), actual), $"expected {expected}\n  actual {actual?.ToJsonString()}");

    [Fact]
    public void BankAccountGivesEveryIntermediateState()
    {
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var results = _host.Apply("bank", Account, (null, Events.Array(
            Events.Make("AccountOpened", new { owner = "alice" }),
            Events.Make("MoneyDeposited", new { amount = 100.50m }),
            Events.Make("MoneyWithdrawn", new { amount = 30 }),
            Events.Make("SomethingElse", new { }))));
        var r = results.Single()!;
        Assert.True(r["ok"]!.GetValue<bool>());
        var states = r["states"]!.AsArray();
        Assert.Equal(4, states.Count);
        AssertJson("""{"owner":"alice","balance":0,"transactions":0}""", states[0]);
        AssertJson("""{"owner":"alice","balance":100.50,"transactions":1}""", states[1]);
        AssertJson("""{"owner":"alice","balance":70.50,"transactions":2}""", states[2]);
        AssertJson("""{"owner":"alice","balance":70.50,"transactions":2}""", states[3]);
    }

    [Fact]
    public void NumbersKeepTheirExactDigitsInAndOut()
    {
        // A state and event data given as text with digits a double would change; the states come back
        // as the exact JSON System.Text.Json writes (a decimal keeps its scale and all its digits).
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var state = JsonNode.Parse("""{"owner":"ann","balance":12345678901234567.89,"transactions":41}""");
        var deposit = Events.Make("MoneyDeposited", new { });
        deposit["data"] = JsonNode.Parse("""{"amount":0.11}""");
        var withdraw = Events.Make("MoneyWithdrawn", new { });
        withdraw["data"] = JsonNode.Parse("""{"amount":79.90}""");
        var r = _host.ApplyRaw("bank", Account, (state, Events.Array(deposit, withdraw))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        var states = r["states"]!.AsArray().Select(s => s!.GetValue<string>()).ToArray();
        Assert.Equal("""{"owner":"ann","balance":12345678901234568.00,"transactions":42}""", states[0]);
        Assert.Equal("""{"owner":"ann","balance":12345678901234488.10,"transactions":43}""", states[1]);
    }

    [Fact]
    public void StartsFromAGivenStateAndGroupsAreIndependent()
    {
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var results = _host.Apply("bank", Account,
            (JsonNode.Parse("""{"Owner":"bob","balance":"50","transactions":3}"""), Events.Array(Events.Make("MoneyDeposited", new { Amount = 5 }))),
            (null, Events.Array(Events.Make("MoneyWithdrawn", new { amount = 1 }))),
            (JsonNode.Parse("null"), Events.Array(Events.Make("AccountOpened", new { owner = "carl" }))));
        Assert.Equal(3, results.Count);
        AssertJson("""{"owner":"bob","balance":55,"transactions":4}""", results[0]!["states"]![0]);
        Assert.False(results[1]!["ok"]!.GetValue<bool>());
        Assert.True(results[2]!["ok"]!.GetValue<bool>());
        AssertJson("""{"owner":"carl","balance":0,"transactions":0}""", results[2]!["states"]![0]);
    }

    [Fact]
    public void AnExceptionInApplyGivesFailedIndexStatesBeforeAndTheMessage()
    {
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var results = _host.Apply("bank", Account, (null, Events.Array(
            Events.Make("AccountOpened", new { owner = "alice" }),
            Events.Make("MoneyDeposited", new { amount = 10 }),
            Events.Make("MoneyWithdrawn", new { amount = 500 }),
            Events.Make("MoneyDeposited", new { amount = 1 }))));
        var r = results.Single()!;
        Assert.False(r["ok"]!.GetValue<bool>());
        Assert.Equal(2, r["failedIndex"]!.GetValue<int>());
        Assert.Equal(2, r["states"]!.AsArray().Count);
        AssertJson("""{"owner":"alice","balance":10,"transactions":1}""", r["states"]![1]);
        var error = r["error"]!;
        Assert.Equal("APPLY_FAILED", error["code"]!.GetValue<string>());
        Assert.Equal("insufficient funds: balance 10, withdrawal 500", error["message"]!.GetValue<string>());
        Assert.Equal("System.InvalidOperationException", error["exceptionType"]!.GetValue<string>());
        Assert.Contains("AccountReducer.Apply", error["stackTrace"]!.GetValue<string>());
    }

    [Fact]
    public void BadStatesAndEventsAreReportedPerGroup()
    {
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var badEvent = new JsonObject { ["eventId"] = "e", ["timestamp"] = "not a date", ["eventType"] = "MoneyDeposited", ["data"] = new JsonObject() };
        var results = _host.Apply("bank", Account,
            (JsonNode.Parse("""{"balance":"lots"}"""), Events.Array(Events.Make("MoneyDeposited", new { amount = 1 }))),
            (null, new JsonArray(badEvent)),
            (null, Events.Array(Events.Make("MoneyDeposited", new { amount = "x" }))));
        Assert.Equal("STATE_DESERIALIZATION_FAILED", results[0]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal(0, results[0]!["failedIndex"]!.GetValue<int>());
        Assert.Equal("INVALID_EVENT", results[1]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal("APPLY_FAILED", results[2]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal("System.Text.Json.JsonException", results[2]!["error"]!["exceptionType"]!.GetValue<string>());
    }

    [Fact]
    public void OrdersWithRecordsImmutableListsAndStateRoundTrip()
    {
        _host.CompileAndLoad("orders", Repo.Example("orders"));
        var events = Events.Array(
            Events.Make("OrderPlaced", new { customerId = "c1", lines = new[] { new { sku = "A", qty = 1, price = 2.5m }, new { sku = "B", qty = 2, price = 1m }, new { sku = "A", qty = 1, price = 9m } } }, "o1", "order"),
            Events.Make("ItemAdded", new { sku = "B", qty = 1, price = 1m }, "o1", "order", 2),
            Events.Make("OrderShipped", new { trackingNumber = "T-1" }, "o1", "order", 3));
        var all = _host.Apply("orders", Order, (null, events)).Single()!;
        Assert.True(all["ok"]!.GetValue<bool>(), all.ToJsonString());
        var final = all["states"]![2]!;
        Assert.Equal("Shipped", final["status"]!.GetValue<string>());
        Assert.Equal("T-1", final["trackingNumber"]!.GetValue<string>());
        Assert.Equal(8m, final["total"]!.GetValue<decimal>()); // A: 2 × 2.5 ; B: 3 × 1
        AssertJson("""[{"sku":"A","qty":2,"price":2.5,"total":5.0},{"sku":"B","qty":3,"price":1,"total":3}]""", final["lines"]);
        AssertJson("""["A","B"]""", final["skus"]);

        // Feeding the state after event 1 back in gives the same result as one pass.
        var first = _host.Apply("orders", Order, (null, new JsonArray(events[0]!.DeepClone()))).Single()!["states"]![0]!;
        var rest = _host.Apply("orders", Order, (first, new JsonArray(events[1]!.DeepClone(), events[2]!.DeepClone()))).Single()!;
        Assert.True(JsonNode.DeepEquals(final, rest["states"]![1]), rest.ToJsonString());

        // A switch-expression "throw" arm.
        var cancelShipped = _host.Apply("orders", Order, (final, Events.Array(Events.Make("OrderCancelled", new { reason = "late" }, "o1", "order", 4)))).Single()!;
        Assert.Equal("a shipped order cannot be cancelled", cancelShipped["error"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void ProjectionResolvesKeysIncludingNullAndPerEventErrors()
    {
        _host.CompileAndLoad("totals", Repo.Example("customer-totals"));
        var events = Events.Array(
            Events.Make("OrderPlaced", new { customerId = "c1", lines = new[] { new { sku = "A", qty = 2, price = 5m } } }, "o1", "order"),
            Events.Make("ItemAdded", new { sku = "B", qty = 1, price = 3m }, "o1", "order", 2),
            Events.Make("ItemAdded", new { sku = "B", qty = 1, price = 3m, customerId = "c1" }, "o1", "order", 3),
            Events.Make("AccountOpened", new { owner = "x" }, "a1", "account"),
            Events.Make("OrderPlaced", new { customerId = "c2", lines = "not a list" }, "o2", "order"));
        var keys = _host.Result("resolveKeys", new JsonObject { ["assemblyId"] = "totals", ["className"] = Totals, ["events"] = events.DeepClone() })["keys"]!.AsArray();
        Assert.Equal(5, keys.Count);
        Assert.Equal("c1", keys[0]!.GetValue<string>());
        Assert.Null(keys[1]);
        Assert.Equal("c1", keys[2]!.GetValue<string>());
        Assert.Null(keys[3]);
        Assert.Equal("RESOLVE_FAILED", keys[4]!["error"]!["code"]!.GetValue<string>());

        var applied = _host.Apply("totals", Totals, (null, new JsonArray(events[0]!.DeepClone(), events[2]!.DeepClone()))).Single()!;
        AssertJson("""{"customerId":"c1","orderCount":1,"totalAmount":13,"orders":{"o1":13}}""", applied["states"]![1]);
    }

    [Fact]
    public void ErrorsForUnknownAssemblyClassAndReducerAsProjection()
    {
        _host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var notLoaded = _host.Send("apply", new JsonObject { ["assemblyId"] = "nope", ["className"] = Account, ["groups"] = new JsonArray() });
        Assert.Equal("ASSEMBLY_NOT_LOADED", notLoaded["payload"]!["code"]!.GetValue<string>());
        var noClass = _host.Send("apply", new JsonObject { ["assemblyId"] = "bank", ["className"] = "BankAccount.Nope", ["groups"] = new JsonArray() });
        Assert.Equal("CLASS_NOT_FOUND", noClass["payload"]!["code"]!.GetValue<string>());
        var stateClass = _host.Send("apply", new JsonObject { ["assemblyId"] = "bank", ["className"] = "BankAccount.AccountState", ["groups"] = new JsonArray() });
        Assert.Equal("CLASS_NOT_FOUND", stateClass["payload"]!["code"]!.GetValue<string>());
        var reducerKeys = _host.Send("resolveKeys", new JsonObject { ["assemblyId"] = "bank", ["className"] = Account, ["events"] = new JsonArray() });
        Assert.Equal("NOT_A_PROJECTION", reducerKeys["payload"]!["code"]!.GetValue<string>());
        var missing = _host.Send("apply", new JsonObject { ["assemblyId"] = "bank" });
        Assert.Equal("BAD_REQUEST", missing["payload"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void LoadIsIdempotentForSameBytesAndRefusesDifferentBytesAndBadImages()
    {
        var bank = _host.CompileAndLoad("x", Repo.Example("bank-account"));
        var again = _host.Result("load", new JsonObject { ["assemblyId"] = "x", ["assembly"] = bank["assembly"]!.GetValue<string>() });
        Assert.True(again["alreadyLoaded"]!.GetValue<bool>());
        var orders = _host.Compile(Repo.Example("orders"));
        var clash = _host.Send("load", new JsonObject { ["assemblyId"] = "x", ["assembly"] = orders["assembly"]!.GetValue<string>() });
        Assert.Equal("ALREADY_LOADED", clash["payload"]!["code"]!.GetValue<string>());
        var junk = _host.Send("load", new JsonObject { ["assemblyId"] = "y", ["assembly"] = Convert.ToBase64String(new byte[] { 1, 2, 3 }) });
        Assert.Equal("VERIFY_FAILED", junk["payload"]!["code"]!.GetValue<string>());
        Assert.True(_host.Result("unload", new JsonObject { ["assemblyId"] = "x" })["wasLoaded"]!.GetValue<bool>());
        Assert.False(_host.Result("unload", new JsonObject { ["assemblyId"] = "x" })["wasLoaded"]!.GetValue<bool>());
    }

    [Fact]
    public void LoadReverifiesAssembliesThatDidNotComeFromTheCompiler()
    {
        // An assembly built outside the policy (here: the host's own test assembly, which uses System.IO) is refused at load.
        var image = File.ReadAllBytes(typeof(ApplyTests).Assembly.Location);
        var refused = _host.Send("load", new JsonObject { ["assemblyId"] = "foreign", ["assembly"] = Convert.ToBase64String(image) });
        Assert.Equal("VERIFY_FAILED", refused["payload"]!["code"]!.GetValue<string>());
        Assert.Contains("forbidden API", refused["payload"]!["message"]!.GetValue<string>());
    }

    [Fact]
    public void HundredAssembliesLoadRunUnloadAndAreCollected()
    {
        var host = new InProcessHost(HostMode.All);
        var compiled = host.Compile(Repo.Example("bank-account"));
        var image = compiled["assembly"]!.GetValue<string>();
        var registry = host.Dispatcher.Registry;
        registry.Collect();
        var baseline = GC.GetTotalMemory(true);

        for (var i = 0; i < 100; i++)
        {
            host.Result("load", new JsonObject { ["assemblyId"] = $"a{i}", ["assembly"] = image });
            var r = host.Apply($"a{i}", Account, (null, Events.Array(Events.Make("AccountOpened", new { owner = "o" }), Events.Make("MoneyDeposited", new { amount = i + 1 }))));
            Assert.True(r[0]!["ok"]!.GetValue<bool>());
        }
        Assert.Equal(100, host.Result("stats")["loadedAssemblies"]!.GetValue<int>());
        var loaded = GC.GetTotalMemory(true);

        for (var i = 0; i < 100; i++)
            Assert.True(host.Result("unload", new JsonObject { ["assemblyId"] = $"a{i}" })["wasLoaded"]!.GetValue<bool>());

        // Unloading completes at a later GC (the host has no Reflection.Emit, so nothing global caches tenant types).
        var deadline = DateTime.UtcNow.AddSeconds(10);
        int unloading;
        do
        {
            var stats = host.Result("stats", new JsonObject { ["collect"] = true });
            unloading = stats["unloadingAssemblies"]!.GetValue<int>();
            if (unloading > 0) Thread.Sleep(100);
        } while (unloading > 0 && DateTime.UtcNow < deadline);

        var after = GC.GetTotalMemory(true);
        Assert.Equal(0, host.Result("stats")["loadedAssemblies"]!.GetValue<int>());
        Assert.True(unloading <= 5, $"{unloading} of 100 unloaded contexts still alive");
        Assert.True(after < loaded, $"memory did not drop: baseline {baseline}, loaded {loaded}, after unload {after}");

        // Still works afterwards.
        host.Result("load", new JsonObject { ["assemblyId"] = "again", ["assembly"] = image });
        Assert.True(host.Apply("again", Account, (null, Events.Array(Events.Make("AccountOpened", new { owner = "z" }))))[0]!["ok"]!.GetValue<bool>());
    }
}
