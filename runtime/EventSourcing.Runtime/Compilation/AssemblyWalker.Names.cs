using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    (string Namespace, List<string> Chain) TypeRefChain(TypeReferenceHandle h)
    {
        var chain = new List<string>();
        var current = h;
        while (true)
        {
            var tr = _md.GetTypeReference(current);
            chain.Insert(0, _md.GetString(tr.Name));
            if (tr.ResolutionScope.Kind == HandleKind.TypeReference)
            {
                current = (TypeReferenceHandle)tr.ResolutionScope;
                continue;
            }
            return (_md.GetString(tr.Namespace), chain);
        }
    }

    string TypeRefName(TypeReferenceHandle h)
    {
        var (ns, chain) = TypeRefChain(h);
        return (ns.Length == 0 ? "" : ns + ".") + string.Join('.', chain.Select(ApiPolicy.StripArity));
    }

    /// <summary>Ns.Outer+Inner, as in serialized type names.</summary>
    string MetadataTypeName(TypeDefinitionHandle h)
    {
        var type = _md.GetTypeDefinition(h);
        var name = _md.GetString(type.Name);
        var declaring = type.GetDeclaringType();
        if (!declaring.IsNil) return MetadataTypeName(declaring) + "+" + name;
        var ns = _md.GetString(type.Namespace);
        return ns.Length == 0 ? name : ns + "." + name;
    }

    string TypeDefName(TypeDefinitionHandle h)
    {
        var type = _md.GetTypeDefinition(h);
        var name = _md.GetString(type.Name);
        var declaring = type.GetDeclaringType();
        if (!declaring.IsNil) return TypeDefName(declaring) + "." + name;
        var ns = _md.GetString(type.Namespace);
        return ns.Length == 0 ? name : ns + "." + name;
    }

    /// <summary>Full name of an attribute's type, whether referenced or (compiler-embedded or tenant-made) defined here:
    /// the runtime and the compiler both recognise special attributes by name alone.</summary>
    string? AttributeTypeName(CustomAttributeHandle h)
    {
        var ctor = _md.GetCustomAttribute(h).Constructor;
        if (ctor.Kind == HandleKind.MethodDefinition)
            return TypeDefName(_md.GetMethodDefinition((MethodDefinitionHandle)ctor).GetDeclaringType());
        if (ctor.Kind != HandleKind.MemberReference) return null;
        var parent = _md.GetMemberReference((MemberReferenceHandle)ctor).Parent;
        return parent.Kind == HandleKind.TypeReference ? TypeRefName((TypeReferenceHandle)parent) : null;
    }

    static string DisplayMemberName(string name) => name switch
    {
        ".ctor" => "#ctor",
        _ when name.StartsWith("get_", StringComparison.Ordinal) || name.StartsWith("set_", StringComparison.Ordinal) => name[4..],
        _ => name,
    };

    static string DisplayFieldName(string name)
    {
        // <Counter>k__BackingField → Counter (auto-property)
        if (name.StartsWith('<') && name.EndsWith(">k__BackingField", StringComparison.Ordinal))
            return name[1..name.IndexOf('>')] + " (auto-property)";
        return name;
    }
}
