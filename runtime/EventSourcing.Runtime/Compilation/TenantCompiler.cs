using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Security.Cryptography;
using System.Text;
using EventSourcing.Runtime.Host;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Emit;
using Microsoft.CodeAnalysis.Text;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Compiles tenant sources with Roslyn against <see cref="ReferenceSet"/>, discovers implementations from
/// symbols, and checks the emitted assembly with <see cref="AssemblyVerifier"/>. Runs no tenant code:
/// no analyzers, only the Regex and System.Text.Json source generators (<see cref="SourceGenerators"/>), no #r/#load
/// resolution, no file access for sources, docs or keys.
/// </summary>
public sealed class TenantCompiler
{
    public const int MaxFiles = 500;
    public const int MaxTotalChars = 8 * 1024 * 1024;
    const int MaxReportedDiagnostics = 100;

    /// <summary>Global usings every archive gets (a safe subset of the SDK's implicit usings).</summary>
    const string ImplicitUsings = "global using System;\nglobal using System.Collections.Generic;\nglobal using System.Linq;\n";

    static readonly CSharpParseOptions ParseOptions = new(
        languageVersion: LanguageVersion.Latest,
        documentationMode: DocumentationMode.None,
        kind: SourceCodeKind.Regular);

    static readonly CSharpCompilationOptions CompilationOptions = new CSharpCompilationOptions(
            OutputKind.DynamicallyLinkedLibrary,
            optimizationLevel: OptimizationLevel.Release,
            allowUnsafe: false,
            checkOverflow: false,
            nullableContextOptions: NullableContextOptions.Enable,
            deterministic: true,
            concurrentBuild: false,
            xmlReferenceResolver: null,
            sourceReferenceResolver: null,
            metadataReferenceResolver: null,
            strongNameProvider: null,
            metadataImportOptions: MetadataImportOptions.Public)
        .WithPlatform(Platform.AnyCpu)
        .WithSpecificDiagnosticOptions(ReferenceSet.SuppressedDiagnostics);

    readonly IReadOnlyList<MetadataReference>? _references;

    public TenantCompiler() { }

    /// <summary>With another reference set than <see cref="ReferenceSet.References"/> (tests).</summary>
    public TenantCompiler(IReadOnlyList<MetadataReference> references) => _references = references;

    /// <summary>Stack reserved for the thread each compile runs on. Roslyn recurses over the syntax tree, and only some
    /// of its recursion is guarded (CS8078): 15k nested negations overflow a main thread's 8 MiB and kill the process.
    /// Within <see cref="NestingLimit"/> every shape measured compiles in 64 MiB; the default leaves 8× that. Reserved
    /// address space only (pages are touched as deep as a compile goes, released when its thread ends), but it counts
    /// towards RLIMIT_DATA: where the limit leaves no room for it, the stack is halved until a thread starts, down to
    /// 64 MiB. EVENTSOURCING_COMPILE_STACK_MB overrides the default.</summary>
    // Process-wide on purpose: RLIMIT_DATA is the process's, so once a stack size failed to start, every later compile
    // (one at a time; a compile mode host runs no tenant code) starts with the halved size instead of failing again.
    public static int StackBytes { get; private set; } = StackMb() * 1024 * 1024;

    const int DefaultStackMb = 512;
    const int MinStackBytes = 64 * 1024 * 1024;

    static int StackMb() =>
        int.TryParse(Environment.GetEnvironmentVariable("EVENTSOURCING_COMPILE_STACK_MB"), out var mb) && mb is >= 16 and <= 2047 ? mb : DefaultStackMb;

    /// <summary>Compiles on a fresh thread with <see cref="StackBytes"/> of stack and waits for it.</summary>
    public CompileResult Compile(IReadOnlyList<SourceFile> files, ImplementationKind? kind, string? assemblyName = null)
    {
        CompileResult? result = null;
        System.Runtime.ExceptionServices.ExceptionDispatchInfo? failure = null;
        void Run()
        {
            try
            {
                result = CompileHere(files, kind, assemblyName);
            }
            catch (InsufficientExecutionStackException)
            {
                // Roslyn's own stack guard, where it does not turn it into CS8078 itself.
                result = TooDeep(new[] { new CompileDiagnostic(null, 0, 0, "error", "CS8078", "An expression is too long or complex to compile: the code is nested too deeply") });
            }
            catch (Exception ex)
            {
                failure = System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(ex);
            }
        }
        var thread = StartWithLargeStack(Run);
        thread.Join();
        failure?.Throw();
        return result!;
    }

    static Thread StartWithLargeStack(ThreadStart body)
    {
        for (;;)
        {
            var thread = new Thread(body, StackBytes) { Name = "compile", IsBackground = true };
            try
            {
                thread.Start();
                return thread;
            }
            catch (OutOfMemoryException) when (StackBytes / 2 >= MinStackBytes)
            {
                StackBytes /= 2;
                Log.Error($"cannot reserve a compile thread's stack (RLIMIT_DATA?); trying {StackBytes / (1024 * 1024)} MiB");
            }
        }
    }

    CompileResult CompileHere(IReadOnlyList<SourceFile> files, ImplementationKind? kind, string? assemblyName)
    {
        if (files.Count == 0) return Fail("the archive contains no files");
        if (files.Count > MaxFiles) return Fail($"too many files ({files.Count} > {MaxFiles})");
        long total = 0;
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var f in files)
        {
            total += f.Content.Length;
            if (string.IsNullOrWhiteSpace(f.Path)) return Fail("a file has an empty path");
            if (!seen.Add(f.Path)) return Fail($"duplicate file path '{f.Path}'");
        }
        if (total > MaxTotalChars) return Fail($"sources too large ({total} chars > {MaxTotalChars})");

        var sources = files.Where(f => f.Path.EndsWith(".cs", StringComparison.OrdinalIgnoreCase)).ToList();
        if (sources.Count == 0) return Fail("the archive contains no .cs files");

        var tooDeep = sources.Select(f => NestingLimit.CheckTokens(f, ParseOptions)).OfType<CompileDiagnostic>().ToList();
        if (tooDeep.Count > 0) return TooDeep(tooDeep);

        var trees = new List<SyntaxTree>(sources.Count + 1);
        foreach (var f in sources)
            trees.Add(CSharpSyntaxTree.ParseText(SourceText.From(f.Content, Encoding.UTF8), ParseOptions, f.Path));
        tooDeep = trees.Select(NestingLimit.CheckDepth).OfType<CompileDiagnostic>().ToList();
        if (tooDeep.Count > 0) return TooDeep(tooDeep);
        trees.Add(CSharpSyntaxTree.ParseText(SourceText.From(ImplicitUsings, Encoding.UTF8), ParseOptions, "<implicit-usings>.g.cs"));

        assemblyName ??= "Tenant_" + ContentHash(sources);
        var (compilation, generated, generatorDiagnostics) =
            SourceGenerators.Run(CSharpCompilation.Create(assemblyName, trees, _references ?? ReferenceSet.References, CompilationOptions), ParseOptions);

        using var pe = new MemoryStream();
        var emit = compilation.Emit(pe, options: DebugSymbols.EmitOptions);
        var diagnostics = emit.Diagnostics.AddRange(generatorDiagnostics);
        var warnings = diagnostics
            .Where(d => d.Severity == DiagnosticSeverity.Warning)
            .Take(MaxReportedDiagnostics)
            .Select(ToDiagnostic)
            .ToList();
        if (!emit.Success || generatorDiagnostics.Any(d => d.Severity == DiagnosticSeverity.Error))
        {
            var errors = diagnostics
                .Where(d => d.Severity == DiagnosticSeverity.Error)
                .OrderBy(d => d.Location.SourceTree?.FilePath, StringComparer.Ordinal)
                .ThenBy(d => d.Location.SourceSpan.Start)
                .Take(MaxReportedDiagnostics)
                .Select(d => DiagnosticHints.WithHint(ToDiagnostic(d), d))
                .ToList();
            // The IL check does not run on a failed compile: the sandbox's refusals found in the source, in the same answer.
            errors.AddRange(SourceRefusals.Find(compilation).Take(MaxReportedDiagnostics));
            return new CompileResult(false, Array.Empty<DiscoveredImplementation>(), null, errors, warnings,
                $"compilation failed with {diagnostics.Count(d => d.Severity == DiagnosticSeverity.Error)} error(s)");
        }

        var image = pe.ToArray();
        var violations = AssemblyVerifier.Verify(image);
        var reserved = TypesInReservedNamespaces(compilation, generated).Concat(LineDirectives.Check(compilation, generated))
            .Concat(GeneratedCodePolicy.Check(compilation, generated, image)).ToList();
        if (violations.Count > 0 || reserved.Count > 0)
        {
            var located = reserved.Concat(Locate(compilation, violations.Take(MaxReportedDiagnostics).ToList())).Take(MaxReportedDiagnostics).ToList();
            return new CompileResult(false, Array.Empty<DiscoveredImplementation>(), null, located, warnings,
                $"the code uses {violations.Count + reserved.Count} forbidden API(s) or construct(s)");
        }

        var (discovered, problems) = Discover(compilation, kind);
        if (problems.Count > 0)
            return new CompileResult(false, Array.Empty<DiscoveredImplementation>(), null, problems, warnings, "invalid implementation(s)");
        if (discovered.Count == 0)
        {
            var what = kind switch
            {
                ImplementationKind.Reducer => "no implementation of IReducer<TState> found",
                ImplementationKind.Projection => "no implementation of IProjection<TState> found",
                _ => "no implementation of IReducer<TState> or IProjection<TState> found",
            };
            return new CompileResult(false, discovered, null, Array.Empty<CompileDiagnostic>(), warnings,
                what + " (a non-abstract, non-generic class implementing it with a public parameterless constructor)");
        }
        return new CompileResult(true, discovered, image, Array.Empty<CompileDiagnostic>(), warnings, null);
    }

    /// <summary>
    /// Types the tenant declares in System.*, Microsoft.* or a namespace of the host's or the SDK's: the compiler and the runtime recognise attributes there by
    /// name (InlineArray, IsByRefLike, SkipLocalsInit, IgnoresAccessChecksTo, Embedded…), so a tenant-made one could
    /// change how its code is compiled or loaded. Only source-declared types count: Roslyn's own embedded
    /// attributes (RefSafetyRules, Nullable…) live there legitimately.
    /// </summary>
    static List<CompileDiagnostic> TypesInReservedNamespaces(CSharpCompilation compilation, System.Collections.Immutable.ImmutableHashSet<SyntaxTree> generated)
    {
        var found = new List<CompileDiagnostic>();
        foreach (var type in AllTypes(compilation.Assembly.GlobalNamespace))
        {
            if (type.ContainingType is not null || type.DeclaringSyntaxReferences.Length == 0) continue;
            if (type.DeclaringSyntaxReferences.All(r => generated.Contains(r.SyntaxTree))) continue; // the Regex generator's own
            var ns = type.ContainingNamespace.ToDisplayString();
            if (!IsReservedNamespace(ns)) continue;
            var span = type.Locations.FirstOrDefault()?.GetMappedLineSpan();
            found.Add(new CompileDiagnostic(span?.Path, (span?.StartLinePosition.Line ?? -1) + 1, (span?.StartLinePosition.Character ?? -1) + 1,
                "error", "ES0002", HostNamespaces.Contains(ns)
                    ? $"forbidden construct: type {type.ToDisplayString()} declared in namespace {ns} (a namespace of the SDK's or the host's: a failure's frames must not show a type of yours as theirs)"
                    : $"forbidden construct: type {type.ToDisplayString()} declared in namespace {ns} (the System and Microsoft namespaces are reserved: the compiler and the runtime give attributes there special meaning by name)"));
        }
        return found;
    }

    /// <summary>System and Microsoft (attributes recognised by name), and the SDK's and the host's own namespaces (issue 28:
    /// EventSourcing, EventSourcing.Runtime.Host…, whose frames a tenant type must not pose as;
    /// escape-corpus/exception-frames-forged-host.cs).</summary>
    static bool IsReservedNamespace(string ns) =>
        ns is "System" or "Microsoft" || ns.StartsWith("System.", StringComparison.Ordinal) || ns.StartsWith("Microsoft.", StringComparison.Ordinal)
        || HostNamespaces.Contains(ns);

    /// <summary>The namespaces of the host's and the SDK's own types (EventSourcing, EventSourcing.Runtime.Host…).</summary>
    static readonly HashSet<string> HostNamespaces = new[] { typeof(TenantCompiler).Assembly, typeof(EventSourcing.Event).Assembly }
        .SelectMany(a => a.GetTypes())
        .Select(t => t.Namespace)
        .Where(n => n is not null && (n == "EventSourcing" || n.StartsWith("EventSourcing.", StringComparison.Ordinal)))
        .Select(n => n!)
        .ToHashSet(StringComparer.Ordinal);

    static CompileResult TooDeep(IReadOnlyList<CompileDiagnostic> errors) =>
        new(false, Array.Empty<DiscoveredImplementation>(), null, errors, Array.Empty<CompileDiagnostic>(), $"compilation failed with {errors.Count} error(s)");

    static CompileResult Fail(string message) =>
        new(false, Array.Empty<DiscoveredImplementation>(), null, Array.Empty<CompileDiagnostic>(), Array.Empty<CompileDiagnostic>(), message);

    static string ContentHash(IEnumerable<SourceFile> files)
    {
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        foreach (var f in files.OrderBy(f => f.Path, StringComparer.Ordinal))
        {
            sha.AppendData(Encoding.UTF8.GetBytes(f.Path));
            sha.AppendData(new byte[] { 0 });
            sha.AppendData(Encoding.UTF8.GetBytes(f.Content));
            sha.AppendData(new byte[] { 0 });
        }
        return Convert.ToHexStringLower(sha.GetHashAndReset())[..16];
    }

    internal static CompileDiagnostic ToDiagnostic(Diagnostic d)
    {
        var severity = d.Severity switch
        {
            DiagnosticSeverity.Error => "error",
            DiagnosticSeverity.Warning => "warning",
            _ => "info",
        };
        // Source generators report at external-file locations (the tenant's file and line, kept without the tree).
        if (d.Location.IsInSource || d.Location.Kind == LocationKind.ExternalFile)
        {
            var span = d.Location.GetMappedLineSpan();
            return new CompileDiagnostic(span.Path, span.StartLinePosition.Line + 1, span.StartLinePosition.Character + 1,
                severity, d.Id, d.GetMessage(System.Globalization.CultureInfo.InvariantCulture));
        }
        return new CompileDiagnostic(null, 0, 0, severity, d.Id, d.GetMessage(System.Globalization.CultureInfo.InvariantCulture));
    }

    /// <summary>Maps policy violations to source locations by emitting once more with a portable PDB and
    /// reading the sequence point at (or before) each offending IL offset.</summary>
    static List<CompileDiagnostic> Locate(CSharpCompilation compilation, IReadOnlyList<Violation> violations)
    {
        var result = new List<CompileDiagnostic>();
        MetadataReaderProvider? pdbProvider = null;
        try
        {
            if (violations.Any(v => !v.Method.IsNil))
            {
                var pdb = new MemoryStream();
                var emit = compilation.Emit(new MemoryStream(), pdb,
                    options: new EmitOptions(debugInformationFormat: DebugInformationFormat.PortablePdb));
                if (emit.Success)
                {
                    pdb.Position = 0;
                    pdbProvider = MetadataReaderProvider.FromPortablePdbStream(pdb);
                }
            }
            var reader = pdbProvider?.GetMetadataReader();
            foreach (var v in violations)
            {
                CompileDiagnostic? located = null;
                if (reader is not null && !v.Method.IsNil)
                {
                    var debugInfo = reader.GetMethodDebugInformation(MetadataTokens.MethodDebugInformationHandle(MetadataTokens.GetRowNumber(v.Method)));
                    SequencePoint? best = null;
                    foreach (var sp in debugInfo.GetSequencePoints())
                    {
                        if (sp.IsHidden) continue;
                        if (best is not null && sp.Offset > v.IlOffset) break;
                        best = sp; // the last visible point at or before the offset (or the first one)
                    }
                    if (best is { } point)
                    {
                        var path = reader.GetString(reader.GetDocument(point.Document).Name);
                        located = new CompileDiagnostic(path, point.StartLine, point.StartColumn, "error", v.Code, v.Message);
                    }
                }
                located ??= AtTypeDeclaration(compilation, v);
                located ??= new CompileDiagnostic(null, 0, 0, "error", v.Code,
                    v.Context is null ? v.Message : $"{v.Message} in {v.Context}");
                result.Add(located);
            }
        }
        finally
        {
            pdbProvider?.Dispose();
        }
        return result;
    }

    /// <summary>A violation about a type (what it derives from or implements, an abstract override) at the type's declaration;
    /// for a compiler-generated type (a closure, an iterator) at the declaration of the source type that contains it.</summary>
    static CompileDiagnostic? AtTypeDeclaration(CSharpCompilation compilation, Violation v)
    {
        for (var name = v.TypeName; !string.IsNullOrEmpty(name); name = name.LastIndexOf('+') is var plus and > 0 ? name[..plus] : null)
        {
            if (compilation.GetTypeByMetadataName(name) is not { } type || type.Locations.FirstOrDefault(l => l.IsInSource) is not { } location) continue;
            if (name == v.TypeName && MemberLocation(type, v.MemberName) is { } memberLocation) location = memberLocation;
            var span = location.GetMappedLineSpan();
            return new CompileDiagnostic(span.Path, span.StartLinePosition.Line + 1, span.StartLinePosition.Character + 1, "error", v.Code, v.Message);
        }
        return null;
    }

    /// <summary>Where a member (a field; an auto-property's backing field &lt;P&gt;k__BackingField at its property) is declared.</summary>
    static Location? MemberLocation(INamedTypeSymbol type, string? memberName)
    {
        if (memberName is null) return null;
        if (memberName.StartsWith('<') && memberName.IndexOf('>') is var end and > 1) memberName = memberName[1..end];
        return type.GetMembers(memberName).SelectMany(m => m.Locations).FirstOrDefault(l => l.IsInSource);
    }

    /// <summary>Finds reducer/projection classes from the compilation's symbols (nothing is loaded).</summary>
    static (List<DiscoveredImplementation> Found, List<CompileDiagnostic> Problems) Discover(CSharpCompilation compilation, ImplementationKind? kind)
    {
        var found = new List<DiscoveredImplementation>();
        var problems = new List<CompileDiagnostic>();
        // Look the contract up in the SDK assembly itself, so that tenant types with the same names cannot shadow it.
        var sdk = compilation.References
            .Select(compilation.GetAssemblyOrModuleSymbol)
            .OfType<IAssemblySymbol>()
            .FirstOrDefault(a => a.Name == "EventSourcing.Sdk")
            ?? throw new InvalidOperationException("EventSourcing.Sdk is not referenced");
        var reducerInterface = sdk.GetTypeByMetadataName("EventSourcing.IReducer`1");
        var projectionInterface = sdk.GetTypeByMetadataName("EventSourcing.IProjection`1");
        var aggregateAttribute = sdk.GetTypeByMetadataName("EventSourcing.AggregateTypeAttribute");
        var projectionAttribute = sdk.GetTypeByMetadataName("EventSourcing.ProjectionNameAttribute");
        if (reducerInterface is null || projectionInterface is null) throw new InvalidOperationException("EventSourcing.Sdk lacks the contract");

        foreach (var type in AllTypes(compilation.Assembly.GlobalNamespace))
        {
            var reducers = type.AllInterfaces.Where(i => SymbolEqualityComparer.Default.Equals(i.OriginalDefinition, reducerInterface)).ToList();
            var projections = type.AllInterfaces.Where(i => SymbolEqualityComparer.Default.Equals(i.OriginalDefinition, projectionInterface)).ToList();
            if (reducers.Count == 0 && projections.Count == 0) continue;
            if (type.TypeKind != TypeKind.Class || type.IsAbstract || type.IsStatic) continue;
            if (type.IsGenericType || ContainingTypes(type).Any(t => t.IsGenericType)) continue;

            var location = type.Locations.FirstOrDefault();
            CompileDiagnostic Problem(string message)
            {
                var span = location?.GetMappedLineSpan();
                return new CompileDiagnostic(span?.Path, (span?.StartLinePosition.Line ?? -1) + 1, (span?.StartLinePosition.Character ?? -1) + 1,
                    "error", "ES0003", message);
            }

            var display = type.ToDisplayString();
            if (reducers.Count > 0 && projections.Count > 0)
            {
                problems.Add(Problem($"{display} implements both IReducer<TState> and IProjection<TState>; split it into two classes"));
                continue;
            }
            if (reducers.Count > 1 || projections.Count > 1)
            {
                problems.Add(Problem($"{display} implements {(reducers.Count > 1 ? "IReducer" : "IProjection")}<TState> for more than one state type"));
                continue;
            }
            var isReducer = reducers.Count == 1;
            if (kind is ImplementationKind.Reducer && !isReducer) continue;
            if (kind is ImplementationKind.Projection && isReducer) continue;

            if (!type.InstanceConstructors.Any(c => c.Parameters.Length == 0 && c.DeclaredAccessibility == Accessibility.Public))
            {
                problems.Add(Problem($"{display} must have a public parameterless constructor"));
                continue;
            }

            var state = (isReducer ? reducers[0] : projections[0]).TypeArguments[0];
            var stateName = state.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat.WithGlobalNamespaceStyle(SymbolDisplayGlobalNamespaceStyle.Omitted));
            var className = MetadataName(type);
            if (isReducer)
            {
                var aggregateType = AttributeName(type, aggregateAttribute) ?? DefaultAggregateType(type.Name);
                if (string.IsNullOrWhiteSpace(aggregateType))
                {
                    problems.Add(Problem($"{display}: [AggregateType] must not be empty"));
                    continue;
                }
                found.Add(new DiscoveredImplementation(className, stateName, ImplementationKind.Reducer, aggregateType, null));
            }
            else
            {
                var projectionName = AttributeName(type, projectionAttribute) ?? type.Name;
                if (string.IsNullOrWhiteSpace(projectionName))
                {
                    problems.Add(Problem($"{display}: [ProjectionName] must not be empty"));
                    continue;
                }
                found.Add(new DiscoveredImplementation(className, stateName, ImplementationKind.Projection, null, projectionName));
            }
        }

        foreach (var dup in found.Where(d => d.AggregateType is not null).GroupBy(d => d.AggregateType, StringComparer.Ordinal).Where(g => g.Count() > 1))
            problems.Add(new CompileDiagnostic(null, 0, 0, "error", "ES0003",
                $"more than one reducer for aggregate type '{dup.Key}': {string.Join(", ", dup.Select(d => d.ClassName))}"));
        foreach (var dup in found.Where(d => d.ProjectionName is not null).GroupBy(d => d.ProjectionName, StringComparer.Ordinal).Where(g => g.Count() > 1))
            problems.Add(new CompileDiagnostic(null, 0, 0, "error", "ES0003",
                $"more than one projection named '{dup.Key}': {string.Join(", ", dup.Select(d => d.ClassName))}"));

        found.Sort((a, b) => string.CompareOrdinal(a.ClassName, b.ClassName));
        return (found, problems);
    }

    /// <summary>Class name less a "Reducer" suffix, lower-cased: AccountReducer → account.</summary>
    public static string DefaultAggregateType(string className)
    {
        var name = className.EndsWith("Reducer", StringComparison.Ordinal) && className.Length > "Reducer".Length
            ? className[..^"Reducer".Length]
            : className;
        return name.ToLowerInvariant();
    }

    static string? AttributeName(INamedTypeSymbol type, INamedTypeSymbol? attribute)
    {
        if (attribute is null) return null;
        foreach (var a in type.GetAttributes())
        {
            if (SymbolEqualityComparer.Default.Equals(a.AttributeClass, attribute) && a.ConstructorArguments.Length == 1)
                return a.ConstructorArguments[0].Value as string ?? "";
        }
        return null;
    }

    static string MetadataName(INamedTypeSymbol type)
    {
        var chain = ContainingTypes(type).Reverse().Append(type).Select(t => t.MetadataName);
        var ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        return ns + string.Join('+', chain);
    }

    static IEnumerable<INamedTypeSymbol> ContainingTypes(INamedTypeSymbol type)
    {
        for (var t = type.ContainingType; t is not null; t = t.ContainingType) yield return t;
    }

    internal static IEnumerable<INamedTypeSymbol> AllTypes(INamespaceSymbol ns)
    {
        foreach (var member in ns.GetMembers())
        {
            if (member is INamespaceSymbol child)
            {
                foreach (var t in AllTypes(child)) yield return t;
            }
            else if (member is INamedTypeSymbol type)
            {
                foreach (var t in WithNested(type)) yield return t;
            }
        }
    }

    static IEnumerable<INamedTypeSymbol> WithNested(INamedTypeSymbol type)
    {
        yield return type;
        foreach (var nested in type.GetTypeMembers())
        foreach (var t in WithNested(nested))
            yield return t;
    }
}
