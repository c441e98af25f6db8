using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>A member reference with its policy verdict.</summary>
    /// <param name="Name">Display name, e.g. System.IO.File.ReadAllText.</param>
    /// <param name="TypeKey">Policy key of the declaring type (namespace.Outer+Inner, no arity), "" for the tenant's own types.</param>
    /// <param name="Member">Metadata member name, e.g. get_Now.</param>
    /// <param name="Verdict">What the policy says of this use.</param>
    sealed record MemberUse(string Name, string TypeKey, string Member, ApiVerdict Verdict);

    void CheckReferences()
    {
        foreach (var h in _md.AssemblyReferences)
        {
            var name = _md.GetString(_md.GetAssemblyReference(h).Name);
            if (!AssemblyVerifier.AllowedAssemblyReferences.Contains(name))
                Report("ES0001", $"forbidden API: assembly {name} (not in the allowed reference set)", default, -1, null);
        }
        for (var row = 1; row <= _md.GetTableRowCount(TableIndex.ModuleRef); row++)
        {
            var h = MetadataTokens.ModuleReferenceHandle(row);
            var name = _md.GetString(_md.GetModuleReference(h).Name);
            Report("ES0001", $"forbidden API: native library '{name}' (DllImport/extern methods are not allowed)", default, -1, null);
        }
        if (_md.GetTableRowCount(TableIndex.File) > 0 || _md.GetTableRowCount(TableIndex.ExportedType) > 0)
            Report("ES0002", "forbidden construct: multi-module assemblies and type forwarders are not allowed", default, -1, null);
    }

    /// <summary>typeof(X) in attribute arguments is stored as a type name string, not a TypeReference; check those names too.</summary>
    void CheckAttributeTypeArguments()
    {
        var provider = new SignatureProviders.AttributeTypeNameProvider();
        var own = new HashSet<string>(StringComparer.Ordinal);
        foreach (var th in _md.TypeDefinitions) own.Add(MetadataTypeName(th));
        foreach (var ah in _md.CustomAttributes)
        {
            provider.TypeNames.Clear();
            try
            {
                _md.GetCustomAttribute(ah).DecodeValue(provider);
            }
            catch (Exception ex) when (ex is BadImageFormatException or ArgumentException or InvalidOperationException or NotSupportedException)
            {
                continue; // e.g. an enum argument whose underlying type is not Int32: nothing to check by name there
            }
            foreach (var serialized in provider.TypeNames)
            {
                var (ns, chain) = ParseSerializedTypeName(serialized);
                if (chain.Count == 0) continue;
                if (own.Contains((ns.Length == 0 ? "" : ns + ".") + string.Join('+', chain))) continue; // the tenant's own type
                var verdict = ApiPolicy.CheckType(ns, chain);
                if (verdict.Access == ApiAccess.Allowed) continue;
                var name = (ns.Length == 0 ? "" : ns + ".") + string.Join('.', chain.Select(ApiPolicy.StripArity));
                Report("ES0001", $"forbidden API: {name} in an attribute argument ({verdict.Reason ?? ApiPolicy.NotAllowlisted})", default, -1, null, verdict.Reason);
            }
        }
    }

    /// <summary>"System.Collections.Generic.List`1[[System.IO.File, System.Runtime]], System.Runtime" → (System.Collections.Generic, [List`1]).</summary>
    static (string Namespace, List<string> Chain) ParseSerializedTypeName(string serialized)
    {
        var depth = 0;
        var end = serialized.Length;
        for (var i = 0; i < serialized.Length; i++)
        {
            var c = serialized[i];
            if (c == '[') depth++;
            else if (c == ']') depth--;
            else if (c == ',' && depth == 0)
            {
                end = i;
                break;
            }
        }
        var name = serialized[..end].Trim();
        var bracket = name.IndexOf('[');
        if (bracket >= 0) name = name[..bracket]; // generic arguments are collected separately by the provider
        var chain = name.Split('+').ToList();
        var lastDot = chain[0].LastIndexOf('.');
        var ns = lastDot < 0 ? "" : chain[0][..lastDot];
        chain[0] = chain[0][(lastDot + 1)..];
        return (ns, chain);
    }

    void MarkParentReported(MemberReferenceHandle h)
    {
        var parent = _md.GetMemberReference(h).Parent;
        if (parent.Kind == HandleKind.TypeReference) _reportedTypes.Add((TypeReferenceHandle)parent);
        else if (parent.Kind == HandleKind.TypeSpecification && GenericTypeOf((TypeSpecificationHandle)parent) is { } generic)
            _reportedTypes.Add(generic);
    }

    MemberUse MemberVerdict(MemberReferenceHandle h)
    {
        var member = _md.GetMemberReference(h);
        var memberName = _md.GetString(member.Name);
        string typeName;
        ApiVerdict typeVerdict;
        switch (member.Parent.Kind)
        {
            case HandleKind.TypeReference:
                var tr = (TypeReferenceHandle)member.Parent;
                (typeName, typeVerdict) = _typeRefs[tr];
                break;
            case HandleKind.TypeSpecification:
                var generic = GenericTypeOf((TypeSpecificationHandle)member.Parent);
                if (generic is TypeReferenceHandle gtr)
                    (typeName, typeVerdict) = _typeRefs[gtr];
                else
                    return WithPointerRule(h, new MemberUse(memberName, "", memberName, ApiVerdict.Allow)); // the tenant's own generic type, or an array
                break;
            case HandleKind.ModuleReference:
                return new MemberUse($"{_md.GetString(_md.GetModuleReference((ModuleReferenceHandle)member.Parent).Name)}::{memberName}",
                    "", memberName, ApiVerdict.Deny("native code is not allowed"));
            default:
                return WithPointerRule(h, new MemberUse(memberName, "", memberName, ApiVerdict.Allow)); // TypeDefinition / MethodDefinition parents: the tenant's own code
        }
        var key = KeyName(member.Parent);
        return WithPointerRule(h, new MemberUse($"{typeName}.{DisplayMemberName(memberName)}", key, memberName, ApiPolicy.CheckMember(key, typeVerdict, memberName)));
    }

    /// <summary>
    /// C# without <c>unsafe</c> cannot name a pointer type, so a member whose signature has one is only ever
    /// reached through the compiler's own lowering: <c>stackalloc</c> into a span and constant data
    /// (<c>"…"u8</c>, <c>ReadOnlySpan&lt;byte&gt; x = [1, 2]</c>) use <c>Span&lt;T&gt;/ReadOnlySpan&lt;T&gt;(void*, int)</c>.
    /// Every other pointer-typed member (Buffer.MemoryCopy, MemoryHandle.Pointer, string(char*)…) is refused.
    /// </summary>
    MemberUse WithPointerRule(MemberReferenceHandle h, MemberUse use)
    {
        if (use.Verdict.Access == ApiAccess.Denied) return use;
        var member = _md.GetMemberReference(h);
        var hasPointer = member.GetKind() == MemberReferenceKind.Method
            ? member.DecodeMethodSignature(SignatureProviders.PointerFinder.Instance, null) is var sig && (sig.ReturnType || sig.ParameterTypes.Contains(true))
            : member.DecodeFieldSignature(SignatureProviders.PointerFinder.Instance, null);
        if (!hasPointer) return use;
        if (use.Member == ".ctor" && use.TypeKey is "System.Span" or "System.ReadOnlySpan") return use;
        return use with { Verdict = ApiVerdict.Deny(ApiPolicy.Pointers) };
    }

    /// <summary>The policy key of a member's parent type: namespace.Outer+Inner without arity.</summary>
    string KeyName(EntityHandle parent)
    {
        TypeReferenceHandle tr;
        if (parent.Kind == HandleKind.TypeReference) tr = (TypeReferenceHandle)parent;
        else if (parent.Kind == HandleKind.TypeSpecification && GenericTypeOf((TypeSpecificationHandle)parent) is TypeReferenceHandle g) tr = g;
        else return "";
        var (ns, chain) = TypeRefChain(tr);
        return (ns.Length == 0 ? "" : ns + ".") + string.Join('+', chain.Select(ApiPolicy.StripArity));
    }

    TypeReferenceHandle? GenericTypeOf(TypeSpecificationHandle h)
    {
        var reader = _md.GetBlobReader(_md.GetTypeSpecification(h).Signature);
        var kind = reader.ReadSignatureTypeCode();
        if (kind != SignatureTypeCode.GenericTypeInstance) return null;
        reader.ReadByte(); // CLASS / VALUETYPE
        var th = reader.ReadTypeHandle();
        return th.Kind == HandleKind.TypeReference ? (TypeReferenceHandle)th : null;
    }

    ApiVerdict TypeRefVerdict(TypeReferenceHandle h)
    {
        var (ns, chain) = TypeRefChain(h);
        return ApiPolicy.CheckType(ns, chain);
    }
}
