using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using Microsoft.CodeAnalysis;

namespace EventSourcing.Runtime.Compilation;

/// <summary>The compile host's uses of the generator-only list: in tenant source (Roslyn symbols) and in an emitted image.</summary>
public static partial class GeneratorOnlyApis
{
    /// <summary>Why tenant source may not use <paramref name="symbol"/>, or null when it may. Naming a type is fine (a
    /// <c>JsonTypeInfo&lt;T&gt;</c> variable holding a context's read-only metadata); using a member is not.</summary>
    public static string? Reason(ISymbol symbol)
    {
        if (symbol is ITypeSymbol) return null;
        if (symbol is IMethodSymbol { ReducedFrom: { } reduced }) symbol = reduced;
        if (symbol.ContainingType is not { } type) return null;
        if (!Types.TryGetValue(ApiPolicy.StripArity(GeneratedCodePolicy.MetadataName(type.OriginalDefinition)), out var e)) return null;
        var name = symbol.MetadataName;
        return e.Members is null || e.Members.Contains(name) || e.Members.Contains("get_" + name) || e.Members.Contains("set_" + name) ? e.Reason : null;
    }

    /// <summary>Whether the assembly references any API on the list (a type on it, or a listed member of a type).</summary>
    public static bool ReferencedBy(byte[] image)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        var md = pe.GetMetadataReader();
        string Name(TypeReferenceHandle h)
        {
            var t = md.GetTypeReference(h);
            var name = ApiPolicy.StripArity(md.GetString(t.Name));
            if (t.ResolutionScope.Kind == HandleKind.TypeReference) return Name((TypeReferenceHandle)t.ResolutionScope) + "+" + name;
            var ns = md.GetString(t.Namespace);
            return ns.Length == 0 ? name : ns + "." + name;
        }
        foreach (var h in md.TypeReferences)
            if (Types.TryGetValue(Name(h), out var e) && e.Members is null) return true;
        foreach (var h in md.MemberReferences)
        {
            var m = md.GetMemberReference(h);
            var parent = m.Parent;
            if (parent.Kind == HandleKind.TypeSpecification)
            {
                // A generic instantiation (JsonObjectInfoValues<T>): its generic type.
                var blob = md.GetBlobReader(md.GetTypeSpecification((TypeSpecificationHandle)parent).Signature);
                if (blob.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) continue;
                blob.ReadSignatureTypeCode();
                parent = blob.ReadTypeHandle();
            }
            if (parent.Kind != HandleKind.TypeReference) continue;
            if (Types.TryGetValue(Name((TypeReferenceHandle)parent), out var e) && (e.Members is null || e.Members.Contains(md.GetString(m.Name)))) return true;
        }
        return false;
    }

    public static string Display(ISymbol symbol) => $"{symbol.ContainingType?.ToDisplayString()}.{symbol.Name}";
}
