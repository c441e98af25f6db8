using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// What only the Regex and System.Text.Json source generators' output may do (<see cref="SourceGenerators"/>), checked on the
/// compilation's symbols, so that a tenant cannot hand-write the same code: derive Regex, RegexRunner, RegexRunnerFactory or
/// JsonSerializerContext, implement IJsonTypeInfoResolver, add members of its own to a JSON context (the generator's partial
/// half is the whole class: the tenant's half declares it and its [JsonSerializable] attributes), and use
/// <see cref="GeneratorOnlyApis"/> (the JSON metadata API, the regex timeout switch). The IL check
/// (<see cref="AssemblyVerifier"/>) allows these shapes, since a finished assembly does not say which code a generator wrote;
/// this check, on every compile, is what keeps them to the generators' output. The generators write what the tenant's
/// pattern and [JsonSerializable] types call for, as escaped literals and typed code; a tenant's <c>#line</c> cannot make its
/// code count as generated, since generated code is told apart by syntax tree, never by file name.
/// </summary>
public static class GeneratedCodePolicy
{
    /// <summary>Framework bases only generated code may derive from, by metadata name → the generator that writes them.</summary>
    public static readonly IReadOnlyDictionary<string, string> GeneratorBases = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["System.Text.RegularExpressions.Regex"] = RegexGenerator,
        ["System.Text.RegularExpressions.RegexRunner"] = RegexGenerator,
        ["System.Text.RegularExpressions.RegexRunnerFactory"] = RegexGenerator,
        [JsonContext] = JsonGenerator,
    };

    const string JsonContext = "System.Text.Json.Serialization.JsonSerializerContext";
    const string Resolver = "System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver";
    const string RegexGenerator = "the Regex source generator's output ([GeneratedRegex])";
    const string JsonGenerator = "the System.Text.Json source generator's output ([JsonSerializable] on a partial JsonSerializerContext)";

    /// <summary>The refusals for <paramref name="compilation"/> (with the <paramref name="generated"/> trees the generators added).
    /// The sources are searched for uses of generator-only APIs only when the emitted <paramref name="image"/> references one
    /// (every use in source is a reference in IL), which spares ordinary compiles a second binding pass.</summary>
    public static List<CompileDiagnostic> Check(Microsoft.CodeAnalysis.Compilation compilation, IReadOnlySet<SyntaxTree> generated, byte[] image)
    {
        var found = new List<CompileDiagnostic>();
        foreach (var type in TenantCompiler.AllTypes(compilation.Assembly.GlobalNamespace))
            CheckType(type, generated, found);
        if (!GeneratorOnlyApis.ReferencedBy(image)) return found;
        foreach (var tree in compilation.SyntaxTrees)
        {
            if (generated.Contains(tree)) continue;
            var model = compilation.GetSemanticModel(tree);
            foreach (var node in tree.GetRoot().DescendantNodes())
            {
                if (node is not (SimpleNameSyntax or BaseObjectCreationExpressionSyntax or ElementAccessExpressionSyntax)) continue;
                if (model.GetSymbolInfo(node).Symbol is not { } symbol || GeneratorOnlyApis.Reason(symbol) is not { } reason) continue;
                found.Add(At(node.GetLocation(), "ES0001", $"forbidden API: {GeneratorOnlyApis.Display(symbol)} ({reason})"));
            }
        }
        return found;
    }

    static void CheckType(INamedTypeSymbol type, IReadOnlySet<SyntaxTree> generated, List<CompileDiagnostic> found)
    {
        if (type.DeclaringSyntaxReferences.Length == 0) return;
        var wholly = type.DeclaringSyntaxReferences.All(r => generated.Contains(r.SyntaxTree));
        var display = type.ToDisplayString();
        var location = type.Locations.FirstOrDefault(l => l.SourceTree is not null && !generated.Contains(l.SourceTree)) ?? type.Locations.FirstOrDefault();

        // The nearest framework base, and whether a tenant type stands between it and this type.
        var direct = true;
        for (var b = type.BaseType; b is not null; b = b.BaseType, direct = false)
        {
            var name = MetadataName(b.OriginalDefinition);
            if (!GeneratorBases.TryGetValue(name, out var who)) continue;
            if (name == JsonContext && direct && type.DeclaringSyntaxReferences.Any(r => generated.Contains(r.SyntaxTree)))
            {
                // The generator's half of a context holds everything; the tenant's half only declares the class.
                foreach (var member in type.GetMembers().Where(m => !m.IsImplicitlyDeclared && m is not IMethodSymbol { AssociatedSymbol: not null }))
                {
                    if (member.DeclaringSyntaxReferences.All(r => generated.Contains(r.SyntaxTree))) continue;
                    found.Add(At(member.Locations.FirstOrDefault() ?? location, "ES0002",
                        $"forbidden construct: {display} declares {member.Name} in a JsonSerializerContext (a context is {JsonGenerator} and nothing else: it is shared by every call)"));
                }
            }
            else if (!wholly)
            {
                var via = direct ? "" : $" (through {type.BaseType!.ToDisplayString()})";
                found.Add(At(location, "ES0002", $"forbidden construct: {display} derives from {Display(name)}{via} (only {who} may: the framework calls it with its own buffers, and it outlives the call)"));
            }
            break;
        }
        if (!wholly && type.AllInterfaces.Any(i => MetadataName(i.OriginalDefinition) == Resolver)
            && !(type.BaseType is { } bt && MetadataName(bt.OriginalDefinition) == JsonContext))
            found.Add(At(location, "ES0002", $"forbidden construct: {display} implements {Resolver} (only {JsonGenerator} may)"));
    }

    static string Display(string metadataName) => DerivationPolicy.Display(metadataName);

    internal static string MetadataName(INamedTypeSymbol type)
    {
        var ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        var chain = new List<string>();
        for (var t = type; t is not null; t = t.ContainingType) chain.Insert(0, t.MetadataName);
        return ns + string.Join('+', chain);
    }

    static CompileDiagnostic At(Location? location, string code, string message)
    {
        var span = location?.GetMappedLineSpan();
        return span is { } s
            ? new CompileDiagnostic(s.Path, s.StartLinePosition.Line + 1, s.StartLinePosition.Character + 1, "error", code, message)
            : new CompileDiagnostic(null, 0, 0, "error", code, message);
    }
}
