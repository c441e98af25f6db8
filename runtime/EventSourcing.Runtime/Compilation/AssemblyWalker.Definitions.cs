using System.Reflection;
using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    void CheckDefinitions()
    {
        var moduleHasMethods = false;
        CheckTypeDefinitions(ref moduleHasMethods);
        if (moduleHasMethods && !Violations.Any(v => v.Reason == "module initializers are not allowed"))
            Report("ES0002", "forbidden construct: module initializer (module initializers are not allowed)", default, -1, null, "module initializers are not allowed");
    }

    void CheckTypeDefinitions(ref bool moduleHasMethods)
    {
        foreach (var th in _md.TypeDefinitions)
        {
            var type = _md.GetTypeDefinition(th);
            var typeName = TypeDefName(th);

            // Overlapping fields are the danger; Roslyn's data blocks (__StaticArrayInitTypeSize=N) have none.
            if ((type.Attributes & TypeAttributes.LayoutMask) == TypeAttributes.ExplicitLayout && !CompilerPatterns.HasNoInstanceFields(_md, type))
                Report("ES0002", $"forbidden construct: explicit struct layout on {typeName} ({"unsafe memory access is not allowed"})", default, -1, null, typeName: MetadataTypeName(th));

            // The compiler indexes an inline array by the attribute's length; only the runtime's own layout matches that.
            var layout = type.GetLayout();
            if ((layout.Size != 0 || (type.Attributes & TypeAttributes.LayoutMask) == TypeAttributes.ExplicitLayout)
                && type.GetCustomAttributes().Any(a => AttributeTypeName(a) == "System.Runtime.CompilerServices.InlineArrayAttribute"))
                Report("ES0002", $"forbidden construct: [InlineArray] with an explicit size or layout on {typeName} (unsafe memory access is not allowed)", default, -1, null, typeName: MetadataTypeName(th));

            if (_md.GetString(type.Name) == "<Module>" && type.GetMethods().Count > 0)
                moduleHasMethods = true;

            foreach (var mh in type.GetMethods())
            {
                var method = _md.GetMethodDefinition(mh);
                var methodName = _md.GetString(method.Name);
                var where = $"{typeName}.{methodName}";
                if ((method.Attributes & MethodAttributes.PinvokeImpl) != 0)
                    Report("ES0001", $"forbidden API: DllImport/extern method {where} (native code is not allowed)", default, -1, null);
                else if ((method.ImplAttributes & MethodImplAttributes.InternalCall) != 0)
                    Report("ES0001", $"forbidden API: extern (internal call) method {where} (native code is not allowed)", default, -1, null);
                else if (method.RelativeVirtualAddress == 0 && (method.Attributes & MethodAttributes.Abstract) == 0
                         && (method.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.Runtime)
                    Report("ES0001", $"forbidden API: extern method {where} (methods without a body are not allowed)", mh, 0, null);

                if (methodName == "Finalize" && (method.Attributes & MethodAttributes.Virtual) != 0
                    && method.GetParameters().Count == 0)
                    Report("ES0002", $"forbidden construct: finalizer on {typeName} (finalizers run outside any request and are not allowed)", mh, 0, null);

                foreach (var ah in method.GetCustomAttributes())
                {
                    if (AttributeTypeName(ah) == "System.Runtime.CompilerServices.ModuleInitializerAttribute")
                        Report("ES0002", $"forbidden construct: [ModuleInitializer] on {where} (module initializers are not allowed)", mh, 0, null, "module initializers are not allowed");
                }
            }

            CheckKeptByRuntime(th, type, typeName);
            CheckDerivation(th, type, typeName);
            CheckGenericStatics(th, type, typeName);
            CheckGenericTypeInitializer(th, type, typeName);

            CheckStaticFields(th, type, typeName);
        }
    }

    /// <summary>
    /// A generic type's static fields exist once per instantiation, created when a call first uses it: a static readonly
    /// string initialised in Hog&lt;T&gt; over many T would allocate at call time, in some batch other tenants wait behind,
    /// where the host cannot run the initialisers ahead (at load) and charge them to their tenant (TenantMemory).
    /// Compiler-generated ones (lambda singletons, delegate caches) hold no data.
    /// </summary>
    void CheckGenericStatics(TypeDefinitionHandle th, TypeDefinition type, string typeName)
    {
        if (type.GetGenericParameters().Count == 0) return;
        foreach (var fh in type.GetFields())
        {
            var field = _md.GetFieldDefinition(fh);
            // Static mutable fields are refused anywhere (above).
            if ((field.Attributes & (FieldAttributes.Static | FieldAttributes.InitOnly)) != (FieldAttributes.Static | FieldAttributes.InitOnly)) continue;
            if (_patterns.TrustedStaticField(fh) is not null) continue;
            Report("ES0002", $"forbidden construct: static field {typeName}.{DisplayFieldName(_md.GetString(field.Name))} in a generic type (each instantiation would get its own copy at call time; use const, or a static readonly field of a non-generic type)", default, -1, null,
                typeName: MetadataTypeName(th), memberName: _md.GetString(field.Name));
        }
    }

    /// <summary>
    /// Instances the runtime keeps beyond one call: the serializer creates a [JsonConverter] (and a factory's converters,
    /// with any naming policy given to them) once per options instance and caches it for the life of the assembly; a
    /// failed static initializer's exception is rethrown, the same object, on every later use of the type. Their instance
    /// fields would be state shared across calls, so they must be readonly and immutable: the primitive-like types
    /// allowed for static readonly fields, converters (checked alike), or exceptions.
    /// </summary>
    void CheckKeptByRuntime(TypeDefinitionHandle th, TypeDefinition type, string typeName)
    {
        if (KeptByRuntime(th) is not { } what) return;
        foreach (var fh in type.GetFields())
        {
            var field = _md.GetFieldDefinition(fh);
            if ((field.Attributes & (FieldAttributes.Static | FieldAttributes.Literal)) != 0) continue;
            var readOnly = (field.Attributes & FieldAttributes.InitOnly) != 0;
            if (readOnly && (field.DecodeSignature(new SignatureProviders.FieldTypeClassifier(_md, regexAllowed: false), null) || IsImmutableReference(field))) continue;
            Report("ES0002", $"forbidden construct: {(readOnly ? "readonly field of a mutable type" : "mutable field")} {typeName}.{DisplayFieldName(_md.GetString(field.Name))} in {what} (the runtime keeps such objects from one call to the next, so they must be immutable: readonly fields of primitive-like types or converters only; an exception is rewritten by every throw; a Regex keeps what its last match grew: use a static readonly Regex of a static class)", default, -1, null);
        }
    }

    /// <summary>A readonly field holding a converter or a naming policy (kept immutable by these rules). Not an exception: an
    /// exception object is rewritten by every throw (its stack trace), so one kept in a converter — which the serializer
    /// keeps for the life of the upload — carried a count from call to call through the depth of its trace, and kept
    /// traces' memory charged to nobody (issue 27 red team, escape-corpus/cross-call-converter-kept-exception.cs).</summary>
    bool IsImmutableReference(FieldDefinition field)
    {
        var reader = _md.GetBlobReader(field.Signature);
        if (reader.ReadSignatureHeader().Kind != SignatureKind.Field) return false;
        var code = reader.ReadSignatureTypeCode();
        if (code == SignatureTypeCode.GenericTypeInstance)
        {
            reader.ReadByte();
            code = SignatureTypeCode.TypeHandle;
        }
        if (code != SignatureTypeCode.TypeHandle) return false;
        var handle = reader.ReadTypeHandle();
        return handle.Kind switch
        {
            HandleKind.TypeDefinition => KeptByRuntime((TypeDefinitionHandle)handle) is { } kind && kind != ExceptionKind,
            HandleKind.TypeReference => KeptKind(TypeRefName((TypeReferenceHandle)handle)) is { } kind && kind != ExceptionKind,
            _ => false,
        };
    }

    /// <summary>"a JSON converter" / "an exception type" when a tenant type derives (through its own types) from one.</summary>
    string? KeptByRuntime(TypeDefinitionHandle th)
    {
        for (var depth = 0; depth < 100; depth++)
        {
            var baseType = _md.GetTypeDefinition(th).BaseType;
            if (baseType.IsNil) return null; // interfaces, <Module>
            if (baseType.Kind == HandleKind.TypeSpecification)
            {
                var reader = _md.GetBlobReader(_md.GetTypeSpecification((TypeSpecificationHandle)baseType).Signature);
                if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) return null;
                reader.ReadByte();
                baseType = reader.ReadTypeHandle();
            }
            switch (baseType.Kind)
            {
                case HandleKind.TypeDefinition:
                    th = (TypeDefinitionHandle)baseType;
                    continue;
                case HandleKind.TypeReference:
                    return KeptKind(TypeRefName((TypeReferenceHandle)baseType));
                default:
                    return null;
            }
        }
        return null;
    }

    const string ExceptionKind = "an exception type";

    static string? KeptKind(string frameworkBase) => frameworkBase switch
    {
        _ when frameworkBase.StartsWith("System.Text.Json.Serialization.Json", StringComparison.Ordinal)
               && frameworkBase.Contains("Converter", StringComparison.Ordinal) && !frameworkBase.EndsWith("Attribute", StringComparison.Ordinal) => "a JSON converter",
        "System.Text.Json.JsonNamingPolicy" => "a JSON naming policy",
        _ when frameworkBase.StartsWith("System.", StringComparison.Ordinal) && frameworkBase.EndsWith("Exception", StringComparison.Ordinal) => ExceptionKind,
        _ => null,
    };
}
