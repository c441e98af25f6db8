using System.Collections.Immutable;
using System.Reflection;
using EventSourcing.Runtime.Host;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The two source generators tenant code may use, and no other: the Regex generator (<c>[GeneratedRegex]</c>) and the
/// System.Text.Json generator (<c>JsonSerializerContext</c> with <c>[JsonSerializable]</c>). They are Microsoft's, shipped in
/// the .NET reference pack (packs/Microsoft.NETCore.App.Ref/&lt;ver&gt;/analyzers/dotnet/cs, copied by runtime/build.sh into
/// generators/ beside the host), and run in the compile host, which runs no tenant code: a generator reads the tenant's syntax
/// and adds sources. What they add is compiled and verified like the tenant's own code, and <see cref="GeneratedCodePolicy"/>
/// keeps what only their output may do (derive Regex/RegexRunner/JsonSerializerContext, use the JSON metadata API) out of
/// the tenant's hand-written code.
/// </summary>
public static class SourceGenerators
{
    /// <summary>Generator assembly file name → the generator type in it.</summary>
    public static readonly IReadOnlyDictionary<string, string> Allowed = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["System.Text.RegularExpressions.Generator"] = "System.Text.RegularExpressions.Generator.RegexGenerator",
        ["System.Text.Json.SourceGeneration"] = "System.Text.Json.SourceGeneration.JsonSourceGenerator",
    };

    static readonly Lazy<ImmutableArray<ISourceGenerator>> Loaded = new(Load);

    /// <summary>The generators found (empty when neither the shipped folder nor a reference pack has them: then
    /// <c>[GeneratedRegex]</c> fails with CS8795, as before).</summary>
    public static ImmutableArray<ISourceGenerator> Generators => Loaded.Value;

    /// <summary>The generators shipped beside the host (runtime/build.sh).</summary>
    public static string ShippedDirectory => Path.Combine(AppContext.BaseDirectory, "generators");

    /// <summary>Runs the generators over <paramref name="compilation"/>; returns the compilation with their sources added, the
    /// trees they added, and their diagnostics (SYSLIB…: an invalid pattern, a context that is not partial…).</summary>
    public static (CSharpCompilation Compilation, ImmutableHashSet<SyntaxTree> Generated, ImmutableArray<Diagnostic> Diagnostics) Run(
        CSharpCompilation compilation, CSharpParseOptions parseOptions)
    {
        var generators = Generators;
        if (generators.IsEmpty) return (compilation, ImmutableHashSet<SyntaxTree>.Empty, ImmutableArray<Diagnostic>.Empty);
        GeneratorDriver driver = CSharpGeneratorDriver.Create(generators, parseOptions: parseOptions,
            driverOptions: new GeneratorDriverOptions(IncrementalGeneratorOutputKind.None, trackIncrementalGeneratorSteps: false));
        driver = driver.RunGeneratorsAndUpdateCompilation(compilation, out var updated, out var diagnostics);
        var before = compilation.SyntaxTrees.ToHashSet();
        var generated = updated.SyntaxTrees.Where(t => !before.Contains(t)).ToImmutableHashSet();
        return ((CSharpCompilation)updated, generated, diagnostics);
    }

    static ImmutableArray<ISourceGenerator> Load()
    {
        var dir = FindDirectory();
        if (dir is null)
        {
            Log.Error($"no source generators found (neither {ShippedDirectory} nor a Microsoft.NETCore.App.Ref pack): [GeneratedRegex] and JsonSerializerContext will not compile");
            return ImmutableArray<ISourceGenerator>.Empty;
        }
        var list = ImmutableArray.CreateBuilder<ISourceGenerator>();
        foreach (var (file, typeName) in Allowed)
        {
            // Into the host's own context: the generators are Microsoft's code, loaded once, and bind to the host's Roslyn.
            var assembly = Assembly.LoadFrom(Path.Combine(dir, file + ".dll"));
            var instance = Activator.CreateInstance(assembly.GetType(typeName, throwOnError: true)!);
            list.Add(instance switch
            {
                IIncrementalGenerator incremental => incremental.AsSourceGenerator(),
                ISourceGenerator plain => plain,
                _ => throw new InvalidOperationException($"{typeName} is not a source generator"),
            });
        }
        return list.ToImmutable();
    }

    /// <summary>generators/ beside the host, else the analyzers folder of the reference pack <see cref="ReferenceSet"/> uses.</summary>
    static string? FindDirectory()
    {
        bool Has(string d) => Allowed.Keys.All(f => File.Exists(Path.Combine(d, f + ".dll")));
        if (Has(ShippedDirectory)) return ShippedDirectory;
        // .../packs/Microsoft.NETCore.App.Ref/<ver>/ref/net10.0 → .../packs/Microsoft.NETCore.App.Ref/<ver>/analyzers/dotnet/cs
        var refDir = ReferenceSet.Source;
        var candidate = Path.GetFullPath(Path.Combine(refDir, "..", "..", "analyzers", "dotnet", "cs"));
        if (Directory.Exists(candidate) && Has(candidate)) return candidate;
        var runtimeDir = System.Runtime.InteropServices.RuntimeEnvironment.GetRuntimeDirectory();
        var packs = Path.GetFullPath(Path.Combine(runtimeDir, "..", "..", "..", "packs", "Microsoft.NETCore.App.Ref"));
        if (!Directory.Exists(packs)) return null;
        return Directory.GetDirectories(packs)
            .Where(d => Path.GetFileName(d).StartsWith(Environment.Version.Major + ".", StringComparison.Ordinal))
            .OrderByDescending(d => Version.TryParse(Path.GetFileName(d).Split('-')[0], out var v) ? v : new Version())
            .Select(d => Path.Combine(d, "analyzers", "dotnet", "cs"))
            .FirstOrDefault(Has);
    }
}
