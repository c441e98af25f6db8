using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>A framework type named by a base type or interface: metadata name with arity, and its namespace and name chain.</summary>
    readonly record struct FrameworkType(string MetadataName, string Namespace, List<string> Chain, bool IsSdk);

    /// <summary>
    /// <see cref="DerivationPolicy"/>: the framework class a tenant type derives from, the framework interfaces it implements,
    /// and the framework members it overrides must be on the list. Every type is checked alike (compiler-generated ones too).
    /// An override is a virtual method without newslot: it replaces an inherited virtual. When no tenant type between it and the
    /// first framework class declares a newslot virtual of that name and arity, it overrides a framework member, whose name
    /// must be on that class's list; names the class is known to have (the refused list) are refused even then.
    /// MethodImpl rows name the overridden or implemented member explicitly; theirs are checked by declaring type.
    /// </summary>
    void CheckDerivation(TypeDefinitionHandle th, TypeDefinition type, string typeName)
    {
        if (_md.GetString(type.Name) == "<Module>") return;
        var metadataName = MetadataTypeName(th);

        if (!type.BaseType.IsNil && Framework(type.BaseType) is { IsSdk: false } direct
            && DerivationPolicy.BaseRule(direct.MetadataName, direct.Namespace, direct.Chain) is null)
            Report("ES0002", $"forbidden construct: {typeName} derives from {DerivationPolicy.Display(direct.MetadataName)} ({DerivationPolicy.Reason(direct.MetadataName)})",
                default, -1, typeName, typeName: metadataName);

        foreach (var ih in type.GetInterfaceImplementations())
        {
            if (Framework(_md.GetInterfaceImplementation(ih).Interface) is not { IsSdk: false } iface) continue;
            if (DerivationPolicy.Interfaces.ContainsKey(iface.MetadataName)) continue;
            Report("ES0002", $"forbidden construct: {typeName} implements {DerivationPolicy.Display(iface.MetadataName)} ({DerivationPolicy.Reason(iface.MetadataName)})",
                default, -1, typeName, typeName: metadataName);
        }

        var (root, tenantAncestors) = FrameworkRoot(th);
        CheckCopyTo(th, type, typeName, metadataName, tenantAncestors);
        if (root is { IsSdk: false } r && DerivationPolicy.BaseRule(r.MetadataName, r.Namespace, r.Chain) is { } rule)
        {
            foreach (var mh in type.GetMethods())
            {
                var method = _md.GetMethodDefinition(mh);
                if ((method.Attributes & MethodAttributes.Virtual) == 0 || (method.Attributes & MethodAttributes.NewSlot) != 0) continue;
                var name = _md.GetString(method.Name);
                if (name == "Finalize" && method.GetParameters().Count == 0) continue; // refused as a finalizer, with its own message
                if (rule.Overridable.ContainsKey(name)) continue;
                var arity = method.DecodeSignature(SignatureProviders.Formatter.Instance, null).ParameterTypes.Length;
                if (!rule.Refused.ContainsKey(name) && tenantAncestors.Any(a => DeclaresNewSlot(a, name, arity))) continue; // the tenant's own virtual
                var why = rule.Refused.TryGetValue(name, out var reason) ? reason : "not on the list of members tenant types may override; see docs/csharp.md";
                Report("ES0002", $"forbidden construct: {typeName}.{name} overrides {DerivationPolicy.Display(rule.Type)}.{name} ({why})",
                    mh, 0, $"{typeName}.{name}", typeName: metadataName);
            }
        }

        foreach (var mih in type.GetMethodImplementations())
        {
            var impl = _md.GetMethodImplementation(mih);
            if (impl.MethodDeclaration.Kind != HandleKind.MemberReference) continue; // a tenant member (records' covariant Clone)
            var declared = _md.GetMemberReference((MemberReferenceHandle)impl.MethodDeclaration);
            if (Framework(declared.Parent) is not { IsSdk: false } owner || DerivationPolicy.Interfaces.ContainsKey(owner.MetadataName)) continue;
            // An explicit override (Roslyn emits one for a covariant return type, with a newslot method) of a framework class member.
            var name = _md.GetString(declared.Name);
            var ownerRule = DerivationPolicy.BaseRule(owner.MetadataName, owner.Namespace, owner.Chain);
            if (ownerRule is not null && ownerRule.Overridable.ContainsKey(name)) continue;
            var why = ownerRule is null ? DerivationPolicy.Reason(owner.MetadataName)
                : ownerRule.Refused.TryGetValue(name, out var reason) ? reason : "not on the list of members tenant types may override; see docs/csharp.md";
            var body = impl.MethodBody.Kind == HandleKind.MethodDefinition ? (MethodDefinitionHandle)impl.MethodBody : default;
            Report("ES0002", $"forbidden construct: {typeName} overrides {DerivationPolicy.Display(owner.MetadataName)}.{name} ({why})",
                body, 0, typeName, typeName: metadataName);
        }
    }

    static readonly HashSet<string> Collections = new(StringComparer.Ordinal)
    {
        "System.Collections.Generic.ICollection`1", "System.Collections.ICollection", "System.Collections.Generic.IList`1", "System.Collections.IList",
    };

    /// <summary>
    /// A collection's CopyTo(array, index) is handed arrays the framework allocated or rented: in a type that implements
    /// ICollection(&lt;T&gt;), or derives from or is derived from by one (an inherited or overriding CopyTo may be the one called),
    /// every method named CopyTo must only write into the array (<see cref="IsWriteOnlyCopyTo"/>).
    /// </summary>
    HashSet<TypeDefinitionHandle>? _ancestorsOfCollections;

    void CheckCopyTo(TypeDefinitionHandle th, TypeDefinition type, string typeName, string metadataName, List<TypeDefinitionHandle> tenantAncestors)
    {
        bool IsCollection(TypeDefinitionHandle t) => _md.GetTypeDefinition(t).GetInterfaceImplementations()
            .Any(ih => Framework(_md.GetInterfaceImplementation(ih).Interface) is { } f && Collections.Contains(f.MetadataName));
        _ancestorsOfCollections ??= _md.TypeDefinitions.Where(IsCollection).SelectMany(c => FrameworkRoot(c).TenantAncestors).ToHashSet();
        var inHierarchy = IsCollection(th) || tenantAncestors.Any(IsCollection) || _ancestorsOfCollections.Contains(th);
        if (!inHierarchy) return;
        foreach (var mh in type.GetMethods())
        {
            var name = _md.GetString(_md.GetMethodDefinition(mh).Name);
            if (name != "CopyTo" && !name.EndsWith(".CopyTo", StringComparison.Ordinal)) continue;
            if (_md.GetMethodDefinition(mh).RelativeVirtualAddress == 0 || IsWriteOnlyCopyTo(mh)) continue;
            Report("ES0002", $"forbidden construct: {typeName}.{name} reads or passes on the array it is given ({DerivationPolicy.CopyToReads})",
                mh, 0, $"{typeName}.{name}", typeName: metadataName);
        }
    }

    /// <summary>
    /// The shapes Roslyn emits for its collection-expression types, and nothing else: copy from one of the type's own fields with a
    /// framework CopyTo (<c>ldarg.0; ldfld; ldarg.1; ldarg.2; callvirt CopyTo; ret</c>), store the one element
    /// (<c>ldarg.1; ldarg.2; ldarg.0; ldfld; stelem; ret</c>), or set it through Array.SetValue
    /// (<c>ldarg.1; ldarg.0; ldfld; [box;] ldarg.2; callvirt SetValue; ret</c>). None of them reads the array or lets it escape:
    /// the framework's CopyTo and SetValue only write into it.
    /// </summary>
    bool IsWriteOnlyCopyTo(MethodDefinitionHandle mh)
    {
        if (!_bodies.TryGetValue(mh, out var body)) return false;
        var ops = body.Il.Select(i => i.Op).ToArray();
        bool FrameworkCall(int i, string member) => body.Il[i].Op is ILOpCode.Callvirt or ILOpCode.Call
            && MetadataTokens.EntityHandle(body.Il[i].Token) is { Kind: HandleKind.MemberReference } h
            && _md.GetMemberReference((MemberReferenceHandle)h) is var mr && _md.GetString(mr.Name) == member && Framework(mr.Parent) is { IsSdk: false };
        return ops switch
        {
            [ILOpCode.Ldarg_0, ILOpCode.Ldfld, ILOpCode.Ldarg_1, ILOpCode.Ldarg_2, _, ILOpCode.Ret] => FrameworkCall(4, "CopyTo"),
            [ILOpCode.Ldarg_1, ILOpCode.Ldarg_2, ILOpCode.Ldarg_0, ILOpCode.Ldfld, ILOpCode.Stelem or ILOpCode.Stelem_ref or ILOpCode.Stelem_i4, ILOpCode.Ret] => true,
            [ILOpCode.Ldarg_1, ILOpCode.Ldarg_0, ILOpCode.Ldfld, ILOpCode.Box, ILOpCode.Ldarg_2, _, ILOpCode.Ret] => FrameworkCall(5, "SetValue"),
            [ILOpCode.Ldarg_1, ILOpCode.Ldarg_0, ILOpCode.Ldfld, ILOpCode.Ldarg_2, _, ILOpCode.Ret] => FrameworkCall(4, "SetValue"),
            _ => false,
        };
    }

    /// <summary>A base type or interface that is a framework (or SDK) type reference, possibly generic; null for the tenant's own types.</summary>
    FrameworkType? Framework(EntityHandle handle)
    {
        if (handle.Kind == HandleKind.TypeSpecification)
        {
            var reader = _md.GetBlobReader(_md.GetTypeSpecification((TypeSpecificationHandle)handle).Signature);
            if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) return null;
            reader.ReadByte(); // CLASS / VALUETYPE
            handle = reader.ReadTypeHandle();
        }
        if (handle.Kind != HandleKind.TypeReference) return null;
        var tr = (TypeReferenceHandle)handle;
        var (ns, chain) = TypeRefChain(tr);
        var outermost = tr;
        while (_md.GetTypeReference(outermost).ResolutionScope.Kind == HandleKind.TypeReference)
            outermost = (TypeReferenceHandle)_md.GetTypeReference(outermost).ResolutionScope;
        var scope = _md.GetTypeReference(outermost).ResolutionScope;
        var isSdk = scope.Kind == HandleKind.AssemblyReference
                    && _md.GetString(_md.GetAssemblyReference((AssemblyReferenceHandle)scope).Name) == "EventSourcing.Sdk";
        return new FrameworkType((ns.Length == 0 ? "" : ns + ".") + string.Join('+', chain), ns, chain, isSdk);
    }

    /// <summary>The first framework class up the chain of tenant base classes, and the tenant classes on the way (nearest first).</summary>
    (FrameworkType? Root, List<TypeDefinitionHandle> TenantAncestors) FrameworkRoot(TypeDefinitionHandle th)
    {
        var ancestors = new List<TypeDefinitionHandle>();
        for (var depth = 0; depth < 1000; depth++)
        {
            var baseType = _md.GetTypeDefinition(th).BaseType;
            if (baseType.IsNil) return (null, ancestors);
            if (Framework(baseType) is { } framework) return (framework, ancestors);
            var definition = baseType.Kind == HandleKind.TypeSpecification ? GenericDefinition((TypeSpecificationHandle)baseType) : baseType;
            if (definition.Kind != HandleKind.TypeDefinition) return (null, ancestors);
            th = (TypeDefinitionHandle)definition;
            ancestors.Add(th);
        }
        return (null, ancestors);
    }

    EntityHandle GenericDefinition(TypeSpecificationHandle h)
    {
        var reader = _md.GetBlobReader(_md.GetTypeSpecification(h).Signature);
        if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) return default;
        reader.ReadByte();
        return reader.ReadTypeHandle();
    }

    bool DeclaresNewSlot(TypeDefinitionHandle th, string name, int arity) =>
        _md.GetTypeDefinition(th).GetMethods().Select(_md.GetMethodDefinition).Any(m =>
            (m.Attributes & (MethodAttributes.Virtual | MethodAttributes.NewSlot)) == (MethodAttributes.Virtual | MethodAttributes.NewSlot)
            && _md.GetString(m.Name) == name
            && m.DecodeSignature(SignatureProviders.Formatter.Instance, null).ParameterTypes.Length == arity);
}
