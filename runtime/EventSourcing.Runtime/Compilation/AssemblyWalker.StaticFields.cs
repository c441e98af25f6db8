using System.Reflection;
using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    const string StaticReadonlyTypes = "only primitives, string, decimal, enums, DateTime(Offset), TimeSpan, Guid, Regex, JsonSerializerOptions (made read-only at load), and ImmutableArray/ImmutableList/ImmutableQueue/ImmutableStack of those may be static readonly; ImmutableDictionary/ImmutableHashSet/ImmutableSorted*/FrozenDictionary/FrozenSet too when the code defines no comparer of its own";

    /// <summary>
    /// A static field outlives the call that set it: only constants, the compiler's own shapes, and static readonly fields
    /// of immutable types (<see cref="SignatureProviders.FieldTypeClassifier"/>) are allowed. Reported at the field's declaration.
    /// </summary>
    void CheckStaticFields(TypeDefinitionHandle th, TypeDefinition type, string typeName)
    {
        foreach (var fh in type.GetFields())
        {
            var field = _md.GetFieldDefinition(fh);
            if ((field.Attributes & FieldAttributes.Static) == 0 || (field.Attributes & FieldAttributes.Literal) != 0) continue;
            if (_patterns.TrustedStaticField(fh) is not null) continue; // constant data, lambda singletons, delegate caches
            var metadataFieldName = _md.GetString(field.Name);
            var fieldName = DisplayFieldName(metadataFieldName);
            if ((field.Attributes & FieldAttributes.InitOnly) == 0)
            {
                Report("ES0002", $"forbidden construct: static mutable field {typeName}.{fieldName} (state shared across calls is not allowed; use const, static readonly of an immutable primitive type, or an instance field)",
                    default, -1, null, typeName: MetadataTypeName(th), memberName: metadataFieldName);
                continue;
            }
            var fieldType = field.DecodeSignature(new SignatureProviders.FieldTypeClassifier(_md, keyedAllowed: !CanMakeComparers()), null);
            if (!fieldType && !IsJsonOptionsField(field))
                Report("ES0002", $"forbidden construct: static readonly field {typeName}.{fieldName} of a mutable/reference type (state shared across calls is not allowed; {StaticReadonlyTypes})",
                    default, -1, null, typeName: MetadataTypeName(th), memberName: metadataFieldName);
        }
    }

    static readonly HashSet<string> ComparerTypes = new(StringComparer.Ordinal)
    {
        "System.Collections.Generic.IComparer`1", "System.Collections.Generic.IEqualityComparer`1", "System.Collections.IComparer",
        "System.Collections.IEqualityComparer", "System.Collections.Generic.IAlternateEqualityComparer`2", "System.Collections.Generic.Comparer`1",
        "System.Collections.Generic.EqualityComparer`1", "System.StringComparer",
    };

    bool? _canMakeComparers;

    /// <summary>
    /// Whether the code can make a comparer that runs its own code on a kept object: a type of its own deriving from or
    /// implementing a comparer, or Comparer&lt;T&gt;.Create / EqualityComparer&lt;T&gt;.Create over its own delegate (whose
    /// closure may hold state). Keyed immutable collections keep their comparer and call it on every lookup, so a static one
    /// built with such a comparer would carry state from one call to the next; the framework's own comparers hold none.
    /// </summary>
    bool CanMakeComparers()
    {
        if (_canMakeComparers is { } known) return known;
        var found = false;
        foreach (var th in _md.TypeDefinitions)
        {
            var type = _md.GetTypeDefinition(th);
            if (ComparerName(type.BaseType) is { } b && ComparerTypes.Contains(b)) found = true;
            foreach (var ih in type.GetInterfaceImplementations())
                if (ComparerName(_md.GetInterfaceImplementation(ih).Interface) is { } i && ComparerTypes.Contains(i)) found = true;
        }
        foreach (var mh in _md.MemberReferences)
        {
            var member = _md.GetMemberReference(mh);
            if (_md.GetString(member.Name) == "Create" && ComparerName(member.Parent) is "System.Collections.Generic.Comparer`1" or "System.Collections.Generic.EqualityComparer`1")
                found = true;
        }
        _canMakeComparers = found;
        return found;
    }

    /// <summary>Namespace.Name (with arity) of a framework type reference, directly or as a generic instantiation; null otherwise.</summary>
    string? ComparerName(EntityHandle h)
    {
        if (h.IsNil) return null;
        if (h.Kind == HandleKind.TypeSpecification)
        {
            if (GenericTypeOf((TypeSpecificationHandle)h) is not { } generic) return null;
            h = generic;
        }
        if (h.Kind != HandleKind.TypeReference) return null;
        var tr = _md.GetTypeReference((TypeReferenceHandle)h);
        var ns = _md.GetString(tr.Namespace);
        return ns.Length == 0 ? _md.GetString(tr.Name) : ns + "." + _md.GetString(tr.Name);
    }
}
