using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Checks a compiled tenant assembly against <see cref="ApiPolicy"/> by walking its metadata with
/// System.Reflection.Metadata: assembly/module references, every TypeReference, MemberReference,
/// MethodSpecification and TypeSpecification used, every IL instruction's token, method and field
/// definitions (P/Invoke, internal calls, module initializers, finalizers, static mutable fields).
/// Every type is checked alike, whatever its name: compiler-generated classes (lambdas, iterators…) are
/// tenant code. Compiler-only APIs pass only in the exact shapes of <see cref="CompilerPatterns"/>.
/// Nothing is loaded or run. The premise is IL that Roslyn produced from C# without <c>unsafe</c>: the check
/// is about which APIs that code reaches, not a full IL verifier for hand-made assemblies.
/// </summary>
public static class AssemblyVerifier
{
    /// <summary>Assemblies tenant code may reference (the compile reference set).</summary>
    public static readonly ImmutableHashSet<string> AllowedAssemblyReferences = ImmutableHashSet.Create(StringComparer.OrdinalIgnoreCase,
        "System.Runtime", "System.Collections", "System.Collections.Immutable", "System.Linq", "System.Memory",
        "System.Runtime.Numerics", "System.Text.Json", "System.Text.RegularExpressions", "System.Text.Encodings.Web",
        "System.Private.CoreLib", "System.Private.Uri", "netstandard", "EventSourcing.Sdk", "System.Security.Cryptography",
        "NodaTime", // the bundled time-zone API (TimePolicy); tenant load contexts resolve it to the host's one copy
        "System.Xml.ReaderWriter", // in the reference set for NodaTime's interfaces only: its every type is refused (System.Xml)
        "System.IO.Hashing");

    public static IReadOnlyList<Violation> Verify(byte[] image)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        if (!pe.HasMetadata) return new[] { new Violation("ES0002", "not a .NET assembly", default, -1, null) };
        try
        {
            var walker = new AssemblyWalker(pe, pe.GetMetadataReader());
            walker.Run();
            return walker.Violations;
        }
        catch (BadImageFormatException ex)
        {
            return new[] { new Violation("ES0002", $"forbidden construct: unreadable metadata or IL ({ex.Message})", default, -1, null) };
        }
    }
}
