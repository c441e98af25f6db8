using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>What a type in a signature is made of: a type parameter anywhere in it, whether it is more than a bare
    /// parameter (a constructed type, array, pointer…), and whether it instantiates one of the assembly's own generic
    /// definitions with such an argument.</summary>
    readonly record struct Shape(bool HasParameter, bool Constructed, bool Expands, bool OwnDefinition)
    {
        /// <summary>An argument that, given to the definition being instantiated, makes its type argument grow: List&lt;T&gt;, T[].</summary>
        public bool Grows => HasParameter && Constructed;
    }

    sealed class ShapeProvider : ISignatureTypeProvider<Shape, object?>
    {
        public static readonly ShapeProvider Instance = new();
        static readonly Shape Plain = new(false, false, false, false);

        public Shape GetPrimitiveType(PrimitiveTypeCode typeCode) => Plain;
        public Shape GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => Plain with { OwnDefinition = true };
        public Shape GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind) => Plain;
        public Shape GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind)
            => reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);
        public Shape GetSZArrayType(Shape elementType) => Wrap(elementType);
        public Shape GetArrayType(Shape elementType, ArrayShape shape) => Wrap(elementType);
        public Shape GetByReferenceType(Shape elementType) => Wrap(elementType);
        public Shape GetPointerType(Shape elementType) => Wrap(elementType);
        public Shape GetPinnedType(Shape elementType) => elementType;
        public Shape GetModifiedType(Shape modifier, Shape unmodifiedType, bool isRequired) => unmodifiedType;
        public Shape GetFunctionPointerType(MethodSignature<Shape> signature) => Plain with { Constructed = true };
        public Shape GetGenericMethodParameter(object? genericContext, int index) => new(true, false, false, false);
        public Shape GetGenericTypeParameter(object? genericContext, int index) => new(true, false, false, false);

        public Shape GetGenericInstantiation(Shape genericType, ImmutableArray<Shape> typeArguments) => new(
            typeArguments.Any(a => a.HasParameter), true,
            typeArguments.Any(a => a.Expands) || (genericType.OwnDefinition && typeArguments.Any(a => a.Grows)), false);

        static Shape Wrap(Shape element) => element with { Constructed = true, OwnDefinition = false };
    }

    const string GenericExpansion =
        "a generic method or type of this assembly instantiated, inside generic code, with a type argument built from a type parameter "
        + "(polymorphic recursion) makes the runtime create new types at run time without bound, in native memory that is never "
        + "given back and is charged to nobody; instantiate it with the bare type parameter or a closed type";

    /// <summary>
    /// Issue 22 red team (escape-corpus/memory-generic-expansion.cs): G&lt;T&gt; calling G&lt;List&lt;T&gt;&gt; loads a new
    /// type per level and per call (List&lt;List&lt;…&gt;&gt;, all framework types, so in CoreLib's loader heap, which is never
    /// unloaded): 160 MiB of native memory per call at depth 16, outside the GC heap limit and the tenant's cap, kept until
    /// RLIMIT_DATA kills the executor in a neighbour's call. Every instantiation code can name is a row of TypeSpec
    /// (generic types, as newobj/call/field/ldtoken targets) or MethodSpec (generic methods): an expansion needs one of
    /// the assembly's own definitions instantiated with an argument that contains a type parameter inside something
    /// bigger (framework generics do not recurse this way). Refused there; T itself and closed arguments are not.
    /// </summary>
    void CheckGenericExpansion()
    {
        for (var row = 1; row <= _md.GetTableRowCount(TableIndex.TypeSpec); row++)
        {
            var h = MetadataTokens.TypeSpecificationHandle(row);
            var spec = _md.GetTypeSpecification(h);
            if (!spec.DecodeSignature(ShapeProvider.Instance, null).Expands) continue;
            Report("ES0002", $"forbidden construct: generic expansion {spec.DecodeSignature(SignatureProviders.Formatter.Instance, null)} ({GenericExpansion})", default, -1, null, GenericExpansion);
        }
        for (var row = 1; row <= _md.GetTableRowCount(TableIndex.MethodSpec); row++)
        {
            var h = MetadataTokens.MethodSpecificationHandle(row);
            var spec = _md.GetMethodSpecification(h);
            var args = spec.DecodeSignature(ShapeProvider.Instance, null);
            if (!(args.Any(a => a.Expands) || (IsOwnMethod(spec.Method) && args.Any(a => a.Grows)))) continue;
            var name = MethodName(spec.Method) + "<" + string.Join(", ", spec.DecodeSignature(SignatureProviders.Formatter.Instance, null)) + ">";
            Report("ES0002", $"forbidden construct: generic expansion {name} ({GenericExpansion})", default, -1, null, GenericExpansion);
        }
    }

    /// <summary>A method of this assembly: a MethodDef, or a reference to one through a type of this assembly (G&lt;X&gt;.M).</summary>
    bool IsOwnMethod(EntityHandle method)
    {
        if (method.Kind == HandleKind.MethodDefinition) return true;
        if (method.Kind != HandleKind.MemberReference) return false;
        var parent = _md.GetMemberReference((MemberReferenceHandle)method).Parent;
        return parent.Kind == HandleKind.TypeDefinition || (parent.Kind == HandleKind.TypeSpecification && IsOwnGeneric((TypeSpecificationHandle)parent));
    }

    /// <summary>Whether a TypeSpec instantiates one of the assembly's own generic definitions (G&lt;X&gt;.M).</summary>
    bool IsOwnGeneric(TypeSpecificationHandle h)
    {
        var reader = _md.GetBlobReader(_md.GetTypeSpecification(h).Signature);
        if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) return false;
        reader.ReadCompressedInteger(); // CLASS or VALUETYPE
        return reader.ReadTypeHandle().Kind == HandleKind.TypeDefinition;
    }

    string MethodName(EntityHandle method) => method.Kind switch
    {
        HandleKind.MethodDefinition => SignatureProviders.Formatter.TypeName(_md, _md.GetMethodDefinition((MethodDefinitionHandle)method).GetDeclaringType()) + "."
                                       + _md.GetString(_md.GetMethodDefinition((MethodDefinitionHandle)method).Name),
        HandleKind.MemberReference => SignatureProviders.Formatter.TypeName(_md, _md.GetMemberReference((MemberReferenceHandle)method).Parent) + "."
                                      + _md.GetString(_md.GetMemberReference((MemberReferenceHandle)method).Name),
        _ => method.Kind.ToString(),
    };
}
