using System.Collections.Immutable;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Issue 27 item 3: the SDK's analyzer (sdk/analyzers, linked into the host) reports the verifier's refusals at the source,
/// and a failed compile answers compiler errors, refusals and warnings together, each with its location.
/// </summary>
public class DiagnosticsTests
{
    readonly InProcessHost _host = new(HostMode.Compile);

    const string Reducer = """
        using EventSourcing;
        namespace Shop;
        public sealed class CartState { public int Items { get; set; } }
        public sealed class CartReducer : IReducer<CartState>
        {
            public CartState InitialState() => new();
            public CartState Apply(CartState state, Event e) => state;
        }
        """;

    /// <summary>As in a tenant's IDE: the whole framework referenced, so refused APIs resolve and only the analyzer objects.</summary>
    static ImmutableArray<Diagnostic> Analyze(string source, AllowlistAnalyzer? analyzer = null)
    {
        var tpa = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator)
            .Where(p => p.EndsWith(".dll", StringComparison.Ordinal))
            .Select(p => (MetadataReference)MetadataReference.CreateFromFile(p));
        var compilation = CSharpCompilation.Create("Ide",
            new[] { CSharpSyntaxTree.ParseText(source, path: "Ide.cs") },
            tpa.Append(MetadataReference.CreateFromFile(typeof(IReducer<>).Assembly.Location)),
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable));
        return compilation.WithAnalyzers(ImmutableArray.Create<DiagnosticAnalyzer>(analyzer ?? new AllowlistAnalyzer(always: true)))
            .GetAnalyzerDiagnosticsAsync().GetAwaiter().GetResult();
    }

    static string Line(Diagnostic d)
    {
        var span = d.Location.GetMappedLineSpan();
        return $"{span.Path}({span.StartLinePosition.Line + 1},{span.StartLinePosition.Character + 1}): {d.Id}: {d.GetMessage()}";
    }

    [Fact]
    public void AnalyzerReportsRefusedApisWithTheVerifiersCodesAndMessagesAtTheExpression()
    {
        var found = Analyze("""
            using System;
            using System.IO;
            public static class C
            {
                public static string Read() => File.ReadAllText("x");
                public static DateTime When() => DateTime.UtcNow;
                public static Guid Id() => Guid.NewGuid();
                public static string Fine() => string.Join(",", new[] { "a" }) + Math.Max(1, 2) + nameof(File.ReadAllText);
            }
            """).Select(Line).OrderBy(l => l, StringComparer.Ordinal).ToList();
        Assert.Equal(new[]
        {
            "Ide.cs(5,36): ES0001: forbidden API: System.IO.File.ReadAllText (file system access is not allowed)",
            "Ide.cs(6,38): ES0001: forbidden API: System.DateTime.UtcNow (non-deterministic: use the event's Timestamp/ids instead)",
            "Ide.cs(7,32): ES0001: forbidden API: System.Guid.NewGuid (non-deterministic: use the event's Timestamp/ids instead)",
        }, found);
    }

    [Fact]
    public void AnalyzerLoadedFromThePackageIsOffWithoutTheSdkProperty()
    {
        // A test project gets the package (and its analyzer) through EventSourcing.Sdk.Testing, without build/EventSourcing.Sdk.props.
        Assert.Empty(Analyze("public static class T { public static System.Guid Id() => System.Guid.NewGuid(); }", new AllowlistAnalyzer()));
    }

    [Fact]
    public void AnalyzerReportsStaticMutableFieldsAndAsyncButNotReadonlyOrConst()
    {
        var found = Analyze("""
            public static class Counters
            {
                public static int Count;
                public static string Name { get; set; } = "";
                public static readonly int Max = 3;
                public const int Min = 1;
                public static int Computed => Max;
                public static async void Later() { }
            }
            """).Select(Line).ToList();
        Assert.Equal(new[]
        {
            $"Ide.cs(3,23): ES0002: forbidden construct: static mutable field Counters.Count ({AllowlistAnalyzer.StaticMutableReason})",
            $"Ide.cs(4,26): ES0002: forbidden construct: static mutable field Counters.Name (auto-property) ({AllowlistAnalyzer.StaticMutableReason})",
            "Ide.cs(8,19): ES0001: forbidden construct: async (async code is not allowed)",
        }, found.OrderBy(l => l, StringComparer.Ordinal));
    }

    [Fact]
    public void AnalyzerAgreesWithTheVerifierOnTheStaticFieldMessage()
    {
        // Compiled without errors the verifier decides: its message must be the analyzer's, word for word.
        var result = _host.Compile("Counter.cs", Reducer + "\npublic static class Counter { public static int Count; }");
        Assert.False(result["ok"]!.GetValue<bool>());
        var es = result["diagnostics"]!.AsArray().Select(d => d!["message"]!.GetValue<string>()).Single(m => m.Contains("Counter.Count", StringComparison.Ordinal));
        Assert.Equal($"forbidden construct: static mutable field Shop.Counter.Count ({AllowlistAnalyzer.StaticMutableReason})", es);
    }

    [Fact]
    public void AFailedCompileAnswersCompilerErrorsRefusalsAndWarningsTogether()
    {
        var result = _host.Compile(new[]
        {
            new SourceFile("Cart.cs", Reducer),
            new SourceFile("Broken.cs", """
                namespace Shop;
                public static class Broken
                {
                    public static int Count;
                    public static int Total() => undefinedName + 1;
                    public static System.Guid Id() => System.Guid.NewGuid();
                }
                public sealed class Line { public string Sku { get; set; } }
                """),
        });
        Assert.False(result["ok"]!.GetValue<bool>());
        var diagnostics = result["diagnostics"]!.AsArray().Select(d => d!.AsObject()).ToList();
        string Where(JsonObject d) => $"{d["path"]}({d["line"]},{d["column"]}): {d["severity"]} {d["id"]}";
        var seen = diagnostics.Select(Where).ToList();
        Assert.Contains("Broken.cs(5,34): error CS0103", seen);
        Assert.Contains("Broken.cs(6,39): error ES0001", seen);
        Assert.Contains("Broken.cs(4,23): error ES0002", seen);
        Assert.Contains("Broken.cs(8,42): warning CS8618", seen);
        // The readable text carries the same errors (earlier clients), warnings stay in their own list too.
        var text = result["compilationError"]!.GetValue<string>();
        Assert.Contains("Broken.cs(6,39): error ES0001: forbidden API: System.Guid.NewGuid", text);
        Assert.Contains(result["warnings"]!.AsArray(), w => w!.GetValue<string>().Contains("CS8618", StringComparison.Ordinal));
    }

    [Fact]
    public void ACompiledUploadAnswersItsWarningsWithLocations()
    {
        var result = _host.Compile(new[] { new SourceFile("Cart.cs", Reducer), new SourceFile("Line.cs", "namespace Shop;\npublic sealed class Line { public string Sku { get; set; } }") });
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
        var warning = Assert.Single(result["diagnostics"]!.AsArray(), d => d!["id"]!.GetValue<string>() == "CS8618")!;
        Assert.Equal("Line.cs", warning["path"]!.GetValue<string>());
        Assert.Equal(2, warning["line"]!.GetValue<int>());
        Assert.Equal("warning", warning["severity"]!.GetValue<string>());
    }

    [Fact]
    public void APartialMethodLeftForAGeneratorGetsTheGeneratorHint()
    {
        var result = _host.Compile(new[]
        {
            new SourceFile("Cart.cs", Reducer),
            new SourceFile("Gen.cs", "namespace Shop;\npublic static partial class Gen { public static partial int Make(); }"),
        });
        var d = Assert.Single(result["diagnostics"]!.AsArray(), d => d!["id"]!.GetValue<string>() == "CS8795")!;
        Assert.Equal(DiagnosticHints.GeneratorHint, d["hint"]!.GetValue<string>());
        Assert.EndsWith($"[{DiagnosticHints.GeneratorHint}]", d["message"]!.GetValue<string>(), StringComparison.Ordinal);
    }
}
