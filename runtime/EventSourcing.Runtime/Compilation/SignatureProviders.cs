using System.Collections.Immutable;
using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

/// <summary>Signature and attribute-value decoders used by <see cref="AssemblyVerifier"/> and <see cref="CompilerPatterns"/>.</summary>
internal static class SignatureProviders
{
    /// <summary>Decodes custom attribute values, collecting the serialized names of System.Type arguments
    /// (including the type arguments of generic ones).</summary>
    internal sealed class AttributeTypeNameProvider : ICustomAttributeTypeProvider<string>
    {
        public readonly List<string> TypeNames = new();

        public string GetPrimitiveType(PrimitiveTypeCode typeCode) => typeCode.ToString();
        public string GetSystemType() => "System.Type";
        public string GetSZArrayType(string elementType) => elementType + "[]";
        public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind)
        {
            var t = reader.GetTypeDefinition(handle);
            return reader.GetString(t.Namespace) + "." + reader.GetString(t.Name);
        }

        public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
        {
            var t = reader.GetTypeReference(handle);
            return reader.GetString(t.Namespace) + "." + reader.GetString(t.Name);
        }

        public bool IsSystemType(string type) => type == "System.Type";
        public PrimitiveTypeCode GetUnderlyingEnumType(string type) => PrimitiveTypeCode.Int32;

        public string GetTypeFromSerializedName(string name)
        {
            Collect(name);
            return name;
        }

        void Collect(string name)
        {
            TypeNames.Add(name);
            // Generic arguments: Outer`1[[Arg, Assembly],[Arg2, Assembly]]
            var open = name.IndexOf("[[", StringComparison.Ordinal);
            if (open < 0) return;
            var depth = 0;
            var start = -1;
            for (var i = open + 1; i < name.Length; i++)
            {
                var c = name[i];
                if (c == '[')
                {
                    if (depth == 0) start = i + 1;
                    depth++;
                }
                else if (c == ']')
                {
                    depth--;
                    if (depth == 0 && start >= 0)
                    {
                        Collect(name[start..i]);
                        start = -1;
                    }
                    if (depth < 0) break;
                }
            }
        }
    }

    /// <summary>Collects the type references a signature mentions.</summary>
    internal sealed class TypeRefCollector : ISignatureTypeProvider<object?, object?>
    {
        public readonly List<TypeReferenceHandle> Found = new();
        public object? GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
        {
            Found.Add(handle);
            return null;
        }
        public object? GetPrimitiveType(PrimitiveTypeCode typeCode) => null;
        public object? GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => null;
        public object? GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind)
            => reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);
        public object? GetSZArrayType(object? elementType) => null;
        public object? GetArrayType(object? elementType, ArrayShape shape) => null;
        public object? GetByReferenceType(object? elementType) => null;
        public object? GetPointerType(object? elementType) => null;
        public object? GetFunctionPointerType(MethodSignature<object?> signature) => null;
        public object? GetGenericInstantiation(object? genericType, ImmutableArray<object?> typeArguments) => null;
        public object? GetGenericMethodParameter(object? genericContext, int index) => null;
        public object? GetGenericTypeParameter(object? genericContext, int index) => null;
        public object? GetModifiedType(object? modifier, object? unmodifiedType, bool isRequired) => null;
        public object? GetPinnedType(object? elementType) => null;
    }

    /// <summary>Decodes a static readonly field's type to "is it an immutable primitive-like type".</summary>
    internal sealed class FieldTypeClassifier : ISignatureTypeProvider<bool, object?>
    {
        static readonly HashSet<string> ImmutableValueTypes = new(StringComparer.Ordinal)
        {
            "System.Decimal", "System.DateTime", "System.DateTimeOffset", "System.TimeSpan", "System.Guid",
            "System.DateOnly", "System.TimeOnly", "System.Int128", "System.UInt128", "System.Half",
            "System.StringComparison", "System.StringSplitOptions", "System.MidpointRounding", "System.DayOfWeek",
            "System.DateTimeKind", "System.Globalization.NumberStyles", "System.Globalization.DateTimeStyles",
            "System.Globalization.CompareOptions", "System.Text.RegularExpressions.RegexOptions",
            "System.Text.Json.JsonEncodedText", // a string and its UTF-8 bytes, exposed read-only (the JSON generator's property names)
        };

        /// <summary>Immutable and thread-safe reference types: nothing reachable from them can be changed once built
        /// (a Regex holds its pattern, options and timeout; tenant types cannot derive from it, DerivationPolicy).</summary>
        static readonly HashSet<string> ImmutableReferenceTypes = new(StringComparer.Ordinal)
        {
            "System.Text.RegularExpressions.Regex",
        };

        /// <summary>Immutable containers with no comparer: immutable exactly when their elements are (checked recursively).
        /// ImmutableArray's array is reachable only through ImmutableCollectionsMarshal.AsArray, which is refused.</summary>
        static readonly HashSet<string> ImmutableContainers = new(StringComparer.Ordinal)
        {
            "System.Collections.Immutable.ImmutableArray`1", "System.Collections.Immutable.ImmutableList`1",
            "System.Collections.Immutable.ImmutableQueue`1", "System.Collections.Immutable.ImmutableStack`1",
        };

        /// <summary>Immutable containers that keep the comparer they were built with (reachable through their Comparer/KeyComparer
        /// properties and called on every lookup): immutable only when no comparer of the tenant's can be in them.</summary>
        internal static readonly HashSet<string> KeyedContainers = new(StringComparer.Ordinal)
        {
            "System.Collections.Immutable.ImmutableDictionary`2", "System.Collections.Immutable.ImmutableHashSet`1",
            "System.Collections.Immutable.ImmutableSortedDictionary`2", "System.Collections.Immutable.ImmutableSortedSet`1",
            "System.Collections.Frozen.FrozenDictionary`2", "System.Collections.Frozen.FrozenSet`1",
        };

        readonly MetadataReader _md;
        readonly bool _keyedAllowed;
        readonly bool _regexAllowed;

        /// <param name="md">The assembly's metadata.</param>
        /// <param name="keyedAllowed">Whether <see cref="KeyedContainers"/> count as immutable: only when the assembly can make no
        /// comparer of its own (AssemblyWalker.CanMakeComparers).</param>
        /// <param name="regexAllowed">Whether a Regex counts: not in the objects the runtime keeps (converters, naming policies,
        /// exceptions), where the host cannot find it to drop its runner after a call (Execution/KeptRegexRunners, issue 28).</param>
        public FieldTypeClassifier(MetadataReader md, bool keyedAllowed = false, bool regexAllowed = true)
        {
            _md = md;
            _keyedAllowed = keyedAllowed;
            _regexAllowed = regexAllowed;
        }

        public bool GetPrimitiveType(PrimitiveTypeCode typeCode) => typeCode switch
        {
            PrimitiveTypeCode.Object or PrimitiveTypeCode.TypedReference or PrimitiveTypeCode.Void => false,
            _ => true, // bool, char, integers, floats, nint, string
        };

        public bool GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind)
        {
            // The tenant's own enums are fine; its own classes/structs are not (mutable or holding references).
            // So are the generators' Regex subclasses and JSON contexts (GeneratedCodePolicy: only their output may derive from
            // Regex or JsonSerializerContext, and a context holds nothing of the tenant's): a Regex is immutable, a context holds
            // read-only options and their metadata cache.
            var baseType = reader.GetTypeDefinition(handle).BaseType;
            if (baseType.Kind != HandleKind.TypeReference) return false;
            var name = FullName((TypeReferenceHandle)baseType);
            return name is "System.Enum" or "System.Text.Json.Serialization.JsonSerializerContext"
                   || (_regexAllowed && name == "System.Text.RegularExpressions.Regex");
        }

        public bool GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
        {
            var name = FullName(handle);
            if (ImmutableValueTypes.Contains(name)) return true;
            if (TimePolicy.ImmutableStaticTypes.Contains(name)) return true; // NodaTime's immutable values, zones and patterns
            if (_md.GetTypeReference(handle).ResolutionScope.Kind == HandleKind.TypeReference) return false; // a nested type, whatever its name says
            if (!_regexAllowed && name == "System.Text.RegularExpressions.Regex") return false;
            return ImmutableReferenceTypes.Contains(name) || ImmutableContainers.Contains(name) || (_keyedAllowed && KeyedContainers.Contains(name));
        }

        string FullName(TypeReferenceHandle h)
        {
            var tr = _md.GetTypeReference(h);
            var ns = _md.GetString(tr.Namespace);
            return ns.Length == 0 ? _md.GetString(tr.Name) : ns + "." + _md.GetString(tr.Name);
        }

        public bool GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind) => false;
        public bool GetSZArrayType(bool elementType) => false;
        public bool GetArrayType(bool elementType, ArrayShape shape) => false;
        public bool GetByReferenceType(bool elementType) => false;
        public bool GetPointerType(bool elementType) => false;
        public bool GetFunctionPointerType(MethodSignature<bool> signature) => false;
        // Only the immutable containers above (Nullable<T> and the rest are not on the list), of immutable elements.
        public bool GetGenericInstantiation(bool genericType, ImmutableArray<bool> typeArguments) => genericType && typeArguments.All(a => a);
        public bool GetGenericMethodParameter(object? genericContext, int index) => false;
        public bool GetGenericTypeParameter(object? genericContext, int index) => false;
        public bool GetModifiedType(bool modifier, bool unmodifiedType, bool isRequired) => unmodifiedType;
        public bool GetPinnedType(bool elementType) => false;
    }

    /// <summary>True when a signature mentions a pointer or function pointer type anywhere.</summary>
    internal sealed class PointerFinder : ISignatureTypeProvider<bool, object?>
    {
        public static readonly PointerFinder Instance = new();
        public bool GetPointerType(bool elementType) => true;
        public bool GetFunctionPointerType(MethodSignature<bool> signature) => true;
        public bool GetByReferenceType(bool elementType) => elementType;
        public bool GetSZArrayType(bool elementType) => elementType;
        public bool GetArrayType(bool elementType, ArrayShape shape) => elementType;
        public bool GetPinnedType(bool elementType) => elementType;
        public bool GetModifiedType(bool modifier, bool unmodifiedType, bool isRequired) => modifier || unmodifiedType;
        public bool GetGenericInstantiation(bool genericType, ImmutableArray<bool> typeArguments) => genericType || typeArguments.Contains(true);
        public bool GetPrimitiveType(PrimitiveTypeCode typeCode) => false;
        public bool GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => false;
        public bool GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind) => false;
        public bool GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind)
            => reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);
        public bool GetGenericMethodParameter(object? genericContext, int index) => false;
        public bool GetGenericTypeParameter(object? genericContext, int index) => false;
    }

    /// <summary>Writes a signature as text ("System.Span`1&lt;!!1&gt;", "modreq(System.Runtime.InteropServices.InAttribute) !!0&amp;"),
    /// so that the shapes the compiler emits can be compared exactly.</summary>
    internal sealed class Formatter : ISignatureTypeProvider<string, object?>
    {
        public static readonly Formatter Instance = new();

        public static string TypeName(MetadataReader md, EntityHandle h) => h.Kind switch
        {
            HandleKind.TypeReference => RefName(md, (TypeReferenceHandle)h),
            HandleKind.TypeDefinition => DefName(md, (TypeDefinitionHandle)h),
            HandleKind.TypeSpecification => md.GetTypeSpecification((TypeSpecificationHandle)h).DecodeSignature(Instance, null),
            _ => h.Kind.ToString(),
        };

        /// <summary>"Parent::Name&lt;arity&gt;(params)ret" ("Parent::Name instance &lt;arity&gt;…" for instance methods) for a member reference.</summary>
        public static string Member(MetadataReader md, MemberReferenceHandle h)
        {
            var m = md.GetMemberReference(h);
            var name = TypeName(md, m.Parent) + "::" + md.GetString(m.Name);
            if (m.GetKind() == MemberReferenceKind.Field) return name + " " + m.DecodeFieldSignature(Instance, null);
            var signature = m.DecodeMethodSignature(Instance, null);
            return name + (signature.Header.IsInstance ? " " : "") + Method(signature);
        }

        /// <summary>"&lt;arity&gt;(params)ret", with "instance " for instance methods.</summary>
        public static string Method(MethodSignature<string> s) =>
            (s.Header.IsInstance ? "instance " : "") + $"<{s.GenericParameterCount}>({string.Join(", ", s.ParameterTypes)}){s.ReturnType}";

        static string RefName(MetadataReader md, TypeReferenceHandle h)
        {
            var t = md.GetTypeReference(h);
            if (t.ResolutionScope.Kind == HandleKind.TypeReference) return RefName(md, (TypeReferenceHandle)t.ResolutionScope) + "+" + md.GetString(t.Name);
            var ns = md.GetString(t.Namespace);
            return ns.Length == 0 ? md.GetString(t.Name) : ns + "." + md.GetString(t.Name);
        }

        static string DefName(MetadataReader md, TypeDefinitionHandle h)
        {
            var t = md.GetTypeDefinition(h);
            var declaring = t.GetDeclaringType();
            if (!declaring.IsNil) return DefName(md, declaring) + "+" + md.GetString(t.Name);
            var ns = md.GetString(t.Namespace);
            return ns.Length == 0 ? md.GetString(t.Name) : ns + "." + md.GetString(t.Name);
        }

        public string GetPrimitiveType(PrimitiveTypeCode typeCode) => typeCode.ToString();
        public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => DefName(reader, handle);
        public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind) => RefName(reader, handle);
        public string GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind)
            => reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);
        public string GetSZArrayType(string elementType) => elementType + "[]";
        public string GetArrayType(string elementType, ArrayShape shape) => elementType + "[" + new string(',', shape.Rank - 1) + "]";
        public string GetByReferenceType(string elementType) => elementType + "&";
        public string GetPointerType(string elementType) => elementType + "*";
        public string GetFunctionPointerType(MethodSignature<string> signature) => "method " + Method(signature);
        public string GetGenericInstantiation(string genericType, ImmutableArray<string> typeArguments) => genericType + "<" + string.Join(", ", typeArguments) + ">";
        public string GetGenericMethodParameter(object? genericContext, int index) => "!!" + index;
        public string GetGenericTypeParameter(object? genericContext, int index) => "!" + index;
        public string GetModifiedType(string modifier, string unmodifiedType, bool isRequired) => (isRequired ? "modreq(" : "modopt(") + modifier + ") " + unmodifiedType;
        public string GetPinnedType(string elementType) => "pinned " + elementType;
    }
}
