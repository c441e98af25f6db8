using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The sandbox's refusals found in the source by <see cref="AllowlistAnalyzer"/> (the SDK's analyzer), for a compile that
/// failed: the IL verifier needs an emitted assembly, so without this a tenant would see compiler errors first and the
/// refusals only on a later upload. After a successful emit the verifier alone decides (it sees more, and a refusal
/// must never rest on the source-level subset alone).
/// </summary>
public static class SourceRefusals
{
    static readonly ImmutableArray<DiagnosticAnalyzer> Analyzers = ImmutableArray.Create<DiagnosticAnalyzer>(new AllowlistAnalyzer(always: true));

    static readonly CompilationWithAnalyzersOptions Options = new(
        new AnalyzerOptions(ImmutableArray<AdditionalText>.Empty), onAnalyzerException: null, concurrentAnalysis: false,
        logAnalyzerExecutionTime: false, reportSuppressedDiagnostics: false);

    /// <summary>ES diagnostics in source order (file, then position).</summary>
    public static IEnumerable<CompileDiagnostic> Find(CSharpCompilation compilation)
    {
        var found = compilation.WithAnalyzers(Analyzers, Options).GetAnalyzerDiagnosticsAsync().GetAwaiter().GetResult();
        return found
            .Where(d => d.Id.StartsWith("ES", StringComparison.Ordinal))
            .OrderBy(d => d.Location.SourceTree?.FilePath, StringComparer.Ordinal)
            .ThenBy(d => d.Location.SourceSpan.Start)
            .Select(TenantCompiler.ToDiagnostic);
    }
}
