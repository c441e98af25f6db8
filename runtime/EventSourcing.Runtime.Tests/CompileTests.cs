using System.Runtime.Loader;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

public class CompileTests
{
    readonly InProcessHost _host = new(HostMode.Compile);

    static JsonObject Single(JsonObject result)
    {
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
        var discovered = result["discovered"]!.AsArray();
        Assert.Single(discovered);
        return discovered[0]!.AsObject();
    }

    [Fact]
    public void BankAccountExampleCompilesAndIsDiscovered()
    {
        var d = Single(_host.Compile(Repo.Example("bank-account")));
        Assert.Equal("BankAccount.AccountReducer", d["className"]!.GetValue<string>());
        Assert.Equal("BankAccount.AccountState", d["stateTypeName"]!.GetValue<string>());
        Assert.Equal("reducer", d["kind"]!.GetValue<string>());
        Assert.Equal("account", d["aggregateType"]!.GetValue<string>());
        Assert.Null(d["projectionName"]);
    }

    [Fact]
    public void OrdersExampleCompilesAndIsDiscovered()
    {
        var d = Single(_host.Compile(Repo.Example("orders")));
        Assert.Equal("Orders.OrderReducer", d["className"]!.GetValue<string>());
        Assert.Equal("Orders.OrderState", d["stateTypeName"]!.GetValue<string>());
        Assert.Equal("reducer", d["kind"]!.GetValue<string>());
        Assert.Equal("order", d["aggregateType"]!.GetValue<string>()); // from the class name: OrderReducer → order
    }

    [Fact]
    public void CustomerTotalsExampleCompilesAndIsDiscovered()
    {
        var d = Single(_host.Compile(Repo.Example("customer-totals")));
        Assert.Equal("CustomerTotals.CustomerTotalsProjection", d["className"]!.GetValue<string>());
        Assert.Equal("CustomerTotals.CustomerTotals", d["stateTypeName"]!.GetValue<string>());
        Assert.Equal("projection", d["kind"]!.GetValue<string>());
        Assert.Equal("customer-totals", d["projectionName"]!.GetValue<string>());
        Assert.Null(d["aggregateType"]);
    }

    [Fact]
    public void KindFilterAndMissingImplementationMessage()
    {
        var result = _host.Compile(Repo.Example("customer-totals"), kind: "reducer");
        Assert.False(result["ok"]!.GetValue<bool>());
        Assert.Contains("no implementation of IReducer<TState> found", result["compilationError"]!.GetValue<string>());

        result = _host.Compile(Repo.Example("bank-account"), kind: "projection");
        Assert.False(result["ok"]!.GetValue<bool>());
        Assert.Contains("no implementation of IProjection<TState> found", result["compilationError"]!.GetValue<string>());

        Assert.True(_host.Compile(Repo.Example("bank-account"), kind: "reducer")["ok"]!.GetValue<bool>());
    }

    [Fact]
    public void SyntaxErrorIsReadableWithFileLineAndColumn()
    {
        const string source = """
            using EventSourcing;
            namespace Broken;
            public sealed class S { public int N { get; set; } }
            public sealed class BrokenReducer : IReducer<S>
            {
                public S Apply(S state, Event e)
                {
                    state.N = x;
                    return state
                }
            }
            """;
        var result = _host.Compile("src/Broken.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>());
        var text = result["compilationError"]!.GetValue<string>();
        Assert.Contains("src/Broken.cs(8,19): error CS0103: The name 'x' does not exist in the current context", text);
        Assert.Contains("src/Broken.cs(9,21): error CS1002: ; expected", text);
        var diagnostics = result["diagnostics"]!.AsArray();
        Assert.Contains(diagnostics, d => d!["id"]!.GetValue<string>() == "CS0103" && d["line"]!.GetValue<int>() == 8 && d["path"]!.GetValue<string>() == "src/Broken.cs");
        Assert.Null(result["assembly"]);
    }

    [Fact]
    public void AggregateTypeFromClassNameAndAttributeAndProjectionNameDefault()
    {
        const string source = """
            using EventSourcing;
            namespace Naming
            {
                public sealed class S { public int N { get; set; } }
                public sealed class ShoppingCartReducer : IReducer<S> { public S Apply(S s, Event e) => s; }
                [AggregateType("inventory-item")]
                public sealed class Stock : IReducer<S> { public S Apply(S s, Event e) => s; }
                public sealed class Outer
                {
                    public sealed class NestedReducer : IReducer<S> { public S Apply(S s, Event e) => s; }
                }
                public sealed class DailyTotals : IProjection<S> { public string? ResolveKey(Event e) => null; public S Apply(S s, Event e) => s; }
                public abstract class BaseReducer : IReducer<S> { public abstract S Apply(S s, Event e); }
            }
            public sealed class GlobalReducer : IReducer<System.Collections.Generic.Dictionary<string, decimal>>
            {
                public System.Collections.Generic.Dictionary<string, decimal> Apply(System.Collections.Generic.Dictionary<string, decimal> s, Event e) => s;
            }
            """;
        var result = _host.Compile("Naming.cs", source);
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
        var byClass = result["discovered"]!.AsArray().ToDictionary(d => d!["className"]!.GetValue<string>(), d => d!.AsObject());
        Assert.Equal(5, byClass.Count);
        Assert.Equal("shoppingcart", byClass["Naming.ShoppingCartReducer"]["aggregateType"]!.GetValue<string>());
        Assert.Equal("inventory-item", byClass["Naming.Stock"]["aggregateType"]!.GetValue<string>());
        Assert.Equal("nested", byClass["Naming.Outer+NestedReducer"]["aggregateType"]!.GetValue<string>());
        Assert.Equal("DailyTotals", byClass["Naming.DailyTotals"]["projectionName"]!.GetValue<string>());
        Assert.Equal("global", byClass["GlobalReducer"]["aggregateType"]!.GetValue<string>());
        Assert.Equal("System.Collections.Generic.Dictionary<string, decimal>", byClass["GlobalReducer"]["stateTypeName"]!.GetValue<string>());
    }

    [Fact]
    public void InvalidImplementationsAreReported()
    {
        const string source = """
            using EventSourcing;
            public sealed class S { }
            public sealed class NoCtorReducer : IReducer<S> { public NoCtorReducer(int x) { } public S Apply(S s, Event e) => s; }
            public sealed class AReducer : IReducer<S> { public S Apply(S s, Event e) => s; }
            [AggregateType("a")] public sealed class Other : IReducer<S> { public S Apply(S s, Event e) => s; }
            """;
        var result = _host.Compile("Bad.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>());
        var text = result["compilationError"]!.GetValue<string>();
        Assert.Contains("NoCtorReducer must have a public parameterless constructor", text);
        Assert.Contains("more than one reducer for aggregate type 'a'", text);
    }

    [Fact]
    public void OutputIsDeterministic()
    {
        var a = _host.Compile(Repo.Example("orders"));
        var b = _host.Compile(Repo.Example("orders"));
        Assert.Equal(a["assemblySha256"]!.GetValue<string>(), b["assemblySha256"]!.GetValue<string>());
        Assert.Equal(a["assembly"]!.GetValue<string>(), b["assembly"]!.GetValue<string>());
    }

    [Fact]
    public void NonSourceFilesAreIgnoredAndAnArchiveWithoutSourcesFails()
    {
        var files = Repo.Example("bank-account").Append(new SourceFile("README.md", "# not C#")).ToList();
        Assert.True(_host.Compile(files)["ok"]!.GetValue<bool>());
        var none = _host.Compile("README.md", "# hello");
        Assert.False(none["ok"]!.GetValue<bool>());
        Assert.Contains("no .cs files", none["compilationError"]!.GetValue<string>());
    }

    [Fact]
    public void CompilingRunsNoTenantCode()
    {
        var result = _host.Result("compile", new JsonObject
        {
            ["assemblyName"] = "CtorProbe",
            ["files"] = new JsonArray(new JsonObject { ["path"] = "Ctor.cs", ["content"] = """
            using EventSourcing;
            public sealed class S { }
            public sealed class CtorReducer : IReducer<S>
            {
                public CtorReducer() { throw new System.InvalidOperationException("ran!"); }
                public S Apply(S s, Event e) => s;
            }
            """ }),
        });
        Assert.True(result["ok"]!.GetValue<bool>());
        Assert.DoesNotContain(AssemblyLoadContext.All.SelectMany(c => c.Assemblies), a => a.GetName().Name == "CtorProbe");
    }

    [Fact]
    public void ExecModeRefusesCompileAndCompileModeRefusesLoad()
    {
        var exec = new InProcessHost(HostMode.Exec);
        var refused = exec.Send("compile", new JsonObject { ["files"] = new JsonArray() });
        Assert.Equal("error", refused["type"]!.GetValue<string>());
        Assert.Equal("UNSUPPORTED_IN_MODE", refused["payload"]!["code"]!.GetValue<string>());

        var refusedLoad = _host.Send("load", new JsonObject { ["assemblyId"] = "x", ["assembly"] = "AA==" });
        Assert.Equal("UNSUPPORTED_IN_MODE", refusedLoad["payload"]!["code"]!.GetValue<string>());
        Assert.True(exec.Result("ping")["pong"]!.GetValue<bool>());
        Assert.True(_host.Result("ping")["pong"]!.GetValue<bool>());
    }

    [Fact]
    public void ModernLanguageFeaturesCompileAndPassThePolicy()
    {
        // Things the compiler lowers into helper calls that the IL policy must still accept.
        const string source = """
            using System;
            using System.Collections.Generic;
            using System.Collections.Immutable;
            using System.Linq;
            using System.Text;
            using System.Text.Json;
            using System.Text.RegularExpressions;
            using EventSourcing;

            namespace Features;

            public enum Level { Low, High }
            public sealed record Item(string Sku, int Qty);
            public sealed record FState
            {
                public List<int> Numbers { get; init; } = [];
                public ImmutableArray<string> Tags { get; init; } = [];
                public Dictionary<string, decimal> Totals { get; init; } = new();
                public string Text { get; init; } = "";
                public Level Level { get; init; }
                public (int A, string B) Pair { get; init; }
                public IReadOnlyList<Item> Items { get; init; } = Array.Empty<Item>();
                public event EventHandler? Changed;
            }

            public sealed class FeaturesReducer : IReducer<FState>
            {
                const int Limit = 10;
                static readonly decimal Rate = 1.5m;
                static readonly string Prefix = "p";
                static readonly TimeSpan Grace = TimeSpan.FromDays(30);
                static readonly Level Default = Level.High;

                public FState Apply(FState s, Event e)
                {
                    var numbers = new List<int>(s.Numbers) { 1, 2, 3 };
                    List<int> more = [4, 5, .. numbers];
                    int[] arr = [7, 8, 9];
                    ReadOnlySpan<int> span = [1, 2, 3];
                    Span<int> stack = stackalloc int[4];
                    stack[0] = span[1];
                    var joined = string.Join(",", "a", "b", "c", "d", "e");
                    var concat = string.Concat("x", "y", "z", "w", "v");
                    var sb = new StringBuilder();
                    foreach (var n in Evens(more)) sb.Append(n).Append(';');
                    var text = $"{Prefix}:{joined}:{concat}:{sb}:{Rate * 2:0.00}:{e.Timestamp:O}:{stack[0]}";
                    var regexOk = Regex.IsMatch(text, "^p:");
                    var level = e.EventType switch { "Up" => Level.High, _ when arr.Length > Limit => Level.Low, _ => Default };
                    Func<int, int> twice = x => x * 2;
                    int Local(int x) => twice(x) + 1;
                    var totals = new Dictionary<string, decimal>(s.Totals);
                    totals[e.EventType] = totals.GetValueOrDefault(e.EventType) + Rate;
                    var data = JsonSerializer.Deserialize<Dictionary<string, JsonElement>>(e.Data.GetRawText(), new JsonSerializerOptions(JsonSerializerDefaults.Web));
                    var doc = JsonDocument.Parse("{\"a\":1}");
                    var items = e.DataAs<List<Item>>()?.Where(i => i.Qty > 0).OrderBy(i => i.Sku).ToList() ?? [];
                    var copy = s with { Numbers = more.Select(Local).ToList(), Text = text + regexOk + (data?.Count ?? 0) + doc.RootElement.GetProperty("a").GetInt32(), Level = level, Totals = totals, Pair = (1, "b"), Tags = s.Tags.Add(e.EventType), Items = items };
                    if (copy.Equals(s) || copy.GetHashCode() == 0) throw new InvalidOperationException(copy.ToString());
                    _ = Grace.TotalDays + Math.Max(1, 2) + Guid.Parse("00000000-0000-0000-0000-000000000001").GetHashCode();
                    _ = decimal.Round(1.25m, 1, MidpointRounding.ToEven) + decimal.Parse("1.5", System.Globalization.CultureInfo.InvariantCulture);
                    _ = DateTime.Parse("2025-01-01T00:00:00Z").ToUniversalTime().Ticks + e.Timestamp.AddDays(1).Ticks;
                    return copy;
                }

                static IEnumerable<int> Evens(IEnumerable<int> xs)
                {
                    foreach (var x in xs) if (x % 2 == 0) yield return x;
                }
            }
            """;
        var result = _host.Compile("Features.cs", source);
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
        Assert.Equal("features", result["discovered"]![0]!["aggregateType"]!.GetValue<string>());
    }

    [Fact]
    public void ApisTheDocsListAsAllowedCompile()
    {
        const string source = """
            using System;
            using System.Collections.Frozen;
            using System.Collections.Generic;
            using System.Collections.ObjectModel;
            using System.Globalization;
            using System.Linq;
            using System.Numerics;
            using System.Text;
            using System.Text.Json;
            using System.Text.Json.Nodes;
            using System.Text.Json.Serialization;
            using EventSourcing;

            public sealed class AState
            {
                [JsonInclude] public int Field;
                public string Text { get; set; } = "";
                public DateOnly Day { get; set; }
            }

            public sealed class AllowedReducer : IReducer<AState>
            {
                static readonly DateOnly Epoch = new(2000, 1, 1);
                static readonly Guid Namespace = new("6ba7b810-9dad-11d1-80b4-00c04fd430c8");

                public AState Apply(AState s, Event e)
                {
                    var frozen = new Dictionary<string, int> { ["a"] = 1 }.ToFrozenDictionary();
                    var ro = new ReadOnlyCollection<int>(new List<int> { 1 });
                    var big = BigInteger.Pow(2, 100);
                    var node = JsonNode.Parse("{\"x\":1}")!;
                    var lazy = new Lazy<int>(() => 5);
                    var uri = new Uri("https://example.com/a?b=c");
                    var sb = new StringBuilder().Append(big).Append(uri.Host).Append(lazy.Value).Append(ro.Count).Append(frozen["a"]);
                    var typeName = GetType().Name + typeof(AState).FullName + (GetType() == typeof(AllowedReducer));
                    var date = DateTime.ParseExact("2025-01-02", "yyyy-MM-dd", CultureInfo.InvariantCulture);
                    var tuple = (a: 1, b: "x");
                    var (x, y) = tuple;
                    var meta = e.Metadata?.TryGetProperty("user", out var u) == true ? u.GetString() : null;
                    s.Text = $"{sb}{typeName}{date:O}{x}{y}{meta}{node["x"]}{Math.Round(2.5m)}{Namespace}{Epoch}";
                    s.Day = DateOnly.FromDateTime(e.Timestamp.UtcDateTime);
                    s.Field++;
                    return s;
                }
            }
            """;
        var result = _host.Compile("Allowed.cs", source);
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
    }

    [Fact]
    public void TenantTypesShadowingTheContractDoNotBreakTheCompiler()
    {
        const string source = """
            namespace EventSourcing
            {
                public interface IReducer<T> { T Apply(T s, object e); }
            }
            public sealed class S { }
            public sealed class FakeReducer : EventSourcing.IReducer<S> { public S Apply(S s, object e) => s; }
            """;
        var result = _host.Compile("Shadow.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>());
        // Issue 28: the EventSourcing namespaces are reserved (a tenant's frames must not pose as the SDK's or the host's).
        Assert.Contains("type EventSourcing.IReducer<T> declared in namespace EventSourcing", result["compilationError"]!.GetValue<string>());
    }

    [Fact]
    public void LineDirectivesWithoutAFileStayAllowed()
    {
        // Issue 28: only a #line naming a file is refused (escape-corpus/exception-frames-forged-*.cs).
        const string source = """
            using EventSourcing;
            public sealed class S { public int N { get; set; } }
            public sealed class LinesReducer : IReducer<S>
            {
                public S Apply(S s, Event e)
                {
            #line 99
                    s.N++;
            #line hidden
                    s.N++;
            #line default
                    return s;
                }
            }
            """;
        var result = _host.Compile("Lines.cs", source);
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
    }

    [Fact]
    public void DefaultAggregateTypeRule()
    {
        Assert.Equal("account", TenantCompiler.DefaultAggregateType("AccountReducer"));
        Assert.Equal("reducer", TenantCompiler.DefaultAggregateType("Reducer"));
        Assert.Equal("order", TenantCompiler.DefaultAggregateType("Order"));
    }
}
