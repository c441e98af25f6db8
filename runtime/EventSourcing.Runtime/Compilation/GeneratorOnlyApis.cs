using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using Microsoft.CodeAnalysis;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Framework APIs that the code the Regex and System.Text.Json source generators write needs and that tenant code may not
/// use itself. <see cref="ApiPolicy"/> allows them in IL (an assembly does not say which code a generator wrote);
/// <see cref="GeneratedCodePolicy"/> refuses every use of them in the tenant's own sources.
/// </summary>
public static class GeneratorOnlyApis
{
    const string JsonMetadata = "JSON contract customization (reflection metadata) is not allowed; only the System.Text.Json source generator's output may use it";
    const string RegexTimeout = "AppContext access is not allowed (process-global state); only the Regex source generator's output reads the host's default match timeout";

    /// <summary>Full type name (namespace.Name without arity, nested with '+') → whether the type itself is allowed to generated
    /// code (else only the listed members of an otherwise allowed type), the members allowed to generated code (null: all), and
    /// the reason tenant code gets.</summary>
    static readonly Dictionary<string, (bool Type, HashSet<string>? Members, string Reason)> Types = new(StringComparer.Ordinal)
    {
        // Generated regex runners read the host's default match timeout (REGEX_DEFAULT_MATCH_TIMEOUT), as Regex itself does.
        ["System.AppContext"] = (true, Set("GetData"), RegexTimeout),
        // Generated JSON metadata: each property's attribute provider is a lazy typeof(T).GetProperty(...) (read only through
        // JsonPropertyInfo.AttributeProvider, a metadata member tenant code cannot reach).
        ["System.Type"] = (false, Set("GetProperty", "GetConstructor", "GetField"), AttributeProvider),
        ["System.Reflection.ICustomAttributeProvider"] = (true, Set(), AttributeProvider),
        ["System.Reflection.BindingFlags"] = (true, Set(), AttributeProvider),
        ["System.Reflection.ParameterModifier"] = (true, Set(), AttributeProvider),
        ["System.Reflection.Binder"] = (true, Set(), AttributeProvider),
        ["System.Reflection.ConstructorInfo"] = (true, Set(), AttributeProvider),
        ["System.Reflection.PropertyInfo"] = (true, Set(), AttributeProvider),
        ["System.Reflection.FieldInfo"] = (true, Set(), AttributeProvider),
        ["System.Text.Json.Serialization.Metadata.JsonTypeInfo"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonPropertyInfo"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonMetadataServices"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonObjectInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonPropertyInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonCollectionInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonParameterInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonTypeInfoKind"] = (true, null, JsonMetadata),
    };

    const string AttributeProvider = "reflection is not allowed; only the System.Text.Json source generator's output names a property's attributes this way";

    static HashSet<string> Set(params string[] members) => new(members, StringComparer.Ordinal);

    /// <summary>The IL verdict for a type on the list (null when not on it, or when only some of its members are).</summary>
    public static ApiVerdict? TypeVerdict(string fullName) => Types.TryGetValue(fullName, out var e) && e.Type ? ApiVerdict.Allow : null;

    /// <summary>The IL verdict for a member (null: the usual rules decide).</summary>
    public static ApiVerdict? MemberVerdict(string typeFullName, string memberName)
    {
        if (!Types.TryGetValue(typeFullName, out var e)) return null;
        if (e.Members is null || e.Members.Contains(memberName)) return ApiVerdict.Allow;
        return e.Type ? ApiVerdict.Deny(e.Reason) : null;
    }

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

    internal static IEnumerable<string> Entries() => Types.Keys.Select(t => "generator-only:" + t);
}
