using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The sandbox's allowlist at the source: references to refused framework APIs (ES0001), async code (ES0001) and static
/// mutable fields (ES0002), with the host IL verifier's codes and messages, at the expression or declaration. Shipped in
/// the EventSourcing.Sdk package (red in the IDE) and run by the host beside its compiler, so that a failed compile
/// answers compiler errors and refusals together. A subset of the verifier: the emitted IL stays the wall (it also sees
/// the compiler's lowerings, derivations, static readonly field types, generic expansion…).
/// </summary>
// This file is compiled into sdk/analyzers (netstandard2.0) and linked into the host: keep it to netstandard2.0 APIs.
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class AllowlistAnalyzer : DiagnosticAnalyzer
{
    const string Category = "EventSourcing.Sandbox";

    public static readonly DiagnosticDescriptor ForbiddenApi = new(
        "ES0001", "Forbidden API", "{0}", Category, DiagnosticSeverity.Error, isEnabledByDefault: true,
        description: "Reducers and projections run in a sandbox: only allowlisted framework APIs may be used (docs/csharp.md).");

    public static readonly DiagnosticDescriptor ForbiddenConstruct = new(
        "ES0002", "Forbidden construct", "{0}", Category, DiagnosticSeverity.Error, isEnabledByDefault: true,
        description: "Reducers and projections run in a sandbox: no state shared across calls (docs/csharp.md).");

    /// <summary>The verifier's message for a static mutable field (AssemblyWalker.StaticFields), word for word.</summary>
    public const string StaticMutableReason =
        "state shared across calls is not allowed; use const, static readonly of an immutable primitive type, or an instance field";

    /// <summary>The MSBuild property (made compiler-visible by the package's build/EventSourcing.Sdk.props) that turns the
    /// analyzer on: set in projects that reference the SDK package directly (the reducers and projections), absent in
    /// projects that get the package transitively (their xunit tests, through EventSourcing.Sdk.Testing).</summary>
    public const string EnabledProperty = "build_property.EventSourcingAllowlist";

    readonly bool _always;

    /// <summary>As a compiler loads it from the package: on where <see cref="EnabledProperty"/> is true.</summary>
    public AllowlistAnalyzer() : this(always: false) { }

    /// <param name="always">true: on whatever the build's options say (the host, whose compile is all tenant code).</param>
    public AllowlistAnalyzer(bool always) => _always = always;

    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } = ImmutableArray.Create(ForbiddenApi, ForbiddenConstruct);

    public override void Initialize(AnalysisContext context)
    {
        // Generated code (obj/…AssemblyInfo.cs, the built-in generators' output) is not the tenant's to fix, and the
        // upload zip does not carry it; the host's IL check still sees everything that is compiled.
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(Start);
    }

    void Start(CompilationStartAnalysisContext context)
    {
        if (!_always && !(context.Options.AnalyzerConfigOptionsProvider.GlobalOptions.TryGetValue(EnabledProperty, out var on)
                          && string.Equals(on, "true", System.StringComparison.OrdinalIgnoreCase)))
            return;
        context.RegisterOperationAction(AnalyzeReference,
            OperationKind.Invocation, OperationKind.ObjectCreation, OperationKind.PropertyReference, OperationKind.FieldReference,
            OperationKind.EventReference, OperationKind.MethodReference);
        context.RegisterSymbolAction(AnalyzeField, SymbolKind.Field);
        context.RegisterSymbolAction(AnalyzeProperty, SymbolKind.Property);
        context.RegisterSyntaxNodeAction(AnalyzeAsync,
            SyntaxKind.MethodDeclaration, SyntaxKind.LocalFunctionStatement, SyntaxKind.ParenthesizedLambdaExpression,
            SyntaxKind.SimpleLambdaExpression, SyntaxKind.AnonymousMethodExpression);
    }

    static void AnalyzeReference(OperationAnalysisContext c)
    {
        var op = c.Operation;
        if (InNameOf(op)) return; // nameof(File.ReadAllText) is a string constant: nothing is referenced at run time
        var (member, memberName) = op switch
        {
            IInvocationOperation i => ((ISymbol)i.TargetMethod, i.TargetMethod.MetadataName),
            IObjectCreationOperation { Constructor: { } ctor } => (ctor, ctor.MetadataName),
            IPropertyReferenceOperation p => (p.Property, AccessorName(p)),
            IFieldReferenceOperation { Field.IsConst: false } f => (f.Field, f.Field.MetadataName), // constants are folded
            IEventReferenceOperation e => (e.Event, e.Event.AddMethod?.MetadataName ?? e.Event.MetadataName),
            IMethodReferenceOperation m => (m.Method, m.Method.MetadataName),
            _ => ((ISymbol?)null, ""),
        };
        if (member?.ContainingType is not { } type) return;
        type = type.OriginalDefinition;
        // The tenant's own types (and anonymous types, closures…) are checked as code, not as references.
        if (SymbolEqualityComparer.Default.Equals(type.ContainingAssembly, c.Compilation.Assembly)) return;

        var (ns, chain) = NameChain(type);
        var key = (ns.Length == 0 ? "" : ns + ".") + string.Join("+", chain.Select(ApiPolicy.StripArity));
        var verdict = ApiPolicy.CheckMember(key, ApiPolicy.CheckType(ns, chain), memberName);
        // CompilerOnly: allowed in the compiler's own lowerings only, which never appear as source operations.
        if (verdict.Access == ApiAccess.Allowed) return;
        var display = (ns.Length == 0 ? "" : ns + ".") + string.Join(".", chain.Select(ApiPolicy.StripArity)) + "." + DisplayMemberName(memberName);
        c.ReportDiagnostic(Diagnostic.Create(ForbiddenApi, op.Syntax.GetLocation(),
            $"forbidden API: {display} ({verdict.Reason ?? ApiPolicy.NotAllowlisted})"));
    }

    static void AnalyzeField(SymbolAnalysisContext c)
    {
        var field = (IFieldSymbol)c.Symbol;
        if (!field.IsStatic || field.IsConst || field.IsReadOnly || field.IsImplicitlyDeclared) return;
        ReportStaticMutable(c, field.ContainingType, field.Name, field.Locations);
    }

    /// <summary>A static auto-property with a setter: its backing field is a static mutable field.</summary>
    static void AnalyzeProperty(SymbolAnalysisContext c)
    {
        var property = (IPropertySymbol)c.Symbol;
        if (!property.IsStatic || property.SetMethod is null) return;
        var hasBackingField = property.ContainingType.GetMembers().OfType<IFieldSymbol>()
            .Any(f => SymbolEqualityComparer.Default.Equals(f.AssociatedSymbol, property));
        if (hasBackingField) ReportStaticMutable(c, property.ContainingType, property.Name + " (auto-property)", property.Locations);
    }

    static void ReportStaticMutable(SymbolAnalysisContext c, INamedTypeSymbol type, string name, ImmutableArray<Location> locations)
    {
        if (locations.FirstOrDefault(l => l.IsInSource) is not { } location) return;
        var typeName = type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat
            .WithGlobalNamespaceStyle(SymbolDisplayGlobalNamespaceStyle.Omitted)
            .WithGenericsOptions(SymbolDisplayGenericsOptions.None));
        c.ReportDiagnostic(Diagnostic.Create(ForbiddenConstruct, location,
            $"forbidden construct: static mutable field {typeName}.{name} ({StaticMutableReason})"));
    }

    /// <summary>async methods, local functions, lambdas and anonymous methods, at the async keyword (as the host reports them).</summary>
    static void AnalyzeAsync(SyntaxNodeAnalysisContext c)
    {
        foreach (var token in c.Node.ChildTokens())
        {
            if (!token.IsKind(SyntaxKind.AsyncKeyword)) continue;
            c.ReportDiagnostic(Diagnostic.Create(ForbiddenApi, token.GetLocation(), "forbidden construct: async (async code is not allowed)"));
            return;
        }
    }

    static bool InNameOf(IOperation op)
    {
        for (var o = op.Parent; o is not null; o = o.Parent)
            if (o is INameOfOperation) return true;
        return false;
    }

    /// <summary>The accessor the reference calls: set_ when it is only assigned, get_ otherwise (a compound assignment calls both; get_ decides).</summary>
    static string AccessorName(IPropertyReferenceOperation p)
    {
        var assigned = p.Parent is ISimpleAssignmentOperation a && a.Target == p;
        var accessor = assigned ? p.Property.SetMethod ?? p.Property.GetMethod : p.Property.GetMethod ?? p.Property.SetMethod;
        return accessor?.MetadataName ?? p.Property.MetadataName;
    }

    /// <summary>The outermost type's namespace and the metadata names of the type and its containers, outer first.</summary>
    static (string Namespace, IReadOnlyList<string> Chain) NameChain(INamedTypeSymbol type)
    {
        var chain = new List<string>();
        var outer = type;
        for (var t = type; t is not null; t = t.ContainingType)
        {
            chain.Insert(0, t.MetadataName);
            outer = t;
        }
        var ns = outer.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() : "";
        return (ns, chain);
    }

    /// <summary>As the verifier shows member names (AssemblyWalker.Names): #ctor, properties without get_/set_.</summary>
    static string DisplayMemberName(string name) =>
        name == ".ctor" ? "#ctor"
        : name.StartsWith("get_", System.StringComparison.Ordinal) || name.StartsWith("set_", System.StringComparison.Ordinal) ? name.Substring(4)
        : name;
}
