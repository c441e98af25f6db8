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
}
