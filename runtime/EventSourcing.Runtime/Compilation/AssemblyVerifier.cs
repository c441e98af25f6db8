using System.Collections.Immutable;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using F = EventSourcing.Runtime.Compilation.SignatureProviders.Formatter;

namespace EventSourcing.Runtime.Compilation;

/// <summary>One refusal found in an emitted assembly.</summary>
/// <param name="Code">ES0001 (forbidden API) or ES0002 (forbidden construct).</param>
/// <param name="Message">e.g. "forbidden API: System.IO.File.ReadAllText (file system access is not allowed)".</param>
/// <param name="Method">The method whose IL uses it, when known.</param>
/// <param name="IlOffset">The IL offset within <paramref name="Method"/>, when known.</param>
/// <param name="Context">"in Type.Method" style context for messages without a source location.</param>
/// <param name="Reason">The policy reason, for de-duplicating follow-on reports.</param>
/// <param name="TypeName">Metadata name (Ns.Outer+Inner) of the type the violation is about, to locate it at the type's declaration
/// when the method has no source location (or there is no method).</param>
public sealed record Violation(string Code, string Message, MethodDefinitionHandle Method, int IlOffset, string? Context, string? Reason = null, string? TypeName = null);

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
public static partial class AssemblyVerifier
{
    /// <summary>Assemblies tenant code may reference (the compile reference set).</summary>
    public static readonly ImmutableHashSet<string> AllowedAssemblyReferences = ImmutableHashSet.Create(StringComparer.OrdinalIgnoreCase,
        "System.Runtime", "System.Collections", "System.Collections.Immutable", "System.Linq", "System.Memory",
        "System.Runtime.Numerics", "System.Text.Json", "System.Text.RegularExpressions", "System.Text.Encodings.Web",
        "System.Private.CoreLib", "System.Private.Uri", "netstandard", "EventSourcing.Sdk");

    public static IReadOnlyList<Violation> Verify(byte[] image)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        if (!pe.HasMetadata) return new[] { new Violation("ES0002", "not a .NET assembly", default, -1, null) };
        try
        {
            var walker = new Walker(pe, pe.GetMetadataReader());
            walker.Run();
            return walker.Violations;
        }
        catch (BadImageFormatException ex)
        {
            return new[] { new Violation("ES0002", $"forbidden construct: unreadable metadata or IL ({ex.Message})", default, -1, null) };
        }
    }

    /// <summary>A member reference with its policy verdict.</summary>
    /// <param name="Name">Display name, e.g. System.IO.File.ReadAllText.</param>
    /// <param name="TypeKey">Policy key of the declaring type (namespace.Outer+Inner, no arity), "" for the tenant's own types.</param>
    /// <param name="Member">Metadata member name, e.g. get_Now.</param>
    sealed record MemberUse(string Name, string TypeKey, string Member, ApiVerdict Verdict);

    sealed partial class Walker
    {
        readonly PEReader _pe;
        readonly MetadataReader _md;
        public readonly List<Violation> Violations = new();
        readonly HashSet<string> _seen = new(StringComparer.Ordinal);

        // Verdicts by handle, computed once.
        readonly Dictionary<TypeReferenceHandle, (string Name, ApiVerdict Verdict)> _typeRefs = new();
        readonly Dictionary<MemberReferenceHandle, MemberUse> _memberRefs = new();
        // Denied references already reported at a location (so the location-less final pass does not repeat them).
        readonly HashSet<TypeReferenceHandle> _reportedTypes = new();
        readonly HashSet<MemberReferenceHandle> _reportedMembers = new();

        readonly Dictionary<MethodDefinitionHandle, (MethodBodyBlock Block, IlInstruction[] Il)> _bodies = new();
        CompilerPatterns _patterns = null!;

        public Walker(PEReader pe, MetadataReader md)
        {
            _pe = pe;
            _md = md;
        }

        public void Run()
        {
            CheckReferences();
            foreach (var h in _md.TypeReferences) _typeRefs[h] = (TypeRefName(h), TypeRefVerdict(h));
            foreach (var h in _md.MemberReferences) _memberRefs[h] = MemberVerdict(h);

            foreach (var th in _md.TypeDefinitions)
            {
                foreach (var mh in _md.GetTypeDefinition(th).GetMethods())
                {
                    var method = _md.GetMethodDefinition(mh);
                    if (method.RelativeVirtualAddress == 0) continue;
                    var block = _pe.GetMethodBody(method.RelativeVirtualAddress);
                    _bodies[mh] = (block, IlDecoder.Decode(block.GetILReader()));
                }
            }
            _patterns = new CompilerPatterns(_md, _bodies);

            CheckDefinitions();
            CheckGenericExpansion();
            CheckMethodBodies();
            CheckAttributeTypeArguments();

            // Whatever was not seen in IL (signatures, attributes, MethodImpls…) is reported without a location,
            // unless something was already reported for the same reason (e.g. MethodInfo after Type.GetMethod).
            var reasons = Violations.Select(v => v.Reason).ToHashSet(StringComparer.Ordinal);
            foreach (var (h, use) in _memberRefs)
            {
                if (use.Verdict.Access != ApiAccess.Denied || _reportedMembers.Contains(h)) continue;
                MarkParentReported(h);
                if (reasons.Add(use.Verdict.Reason!)) Report("ES0001", $"forbidden API: {use.Name} ({use.Verdict.Reason})", default, -1, null, use.Verdict.Reason);
            }
            foreach (var (h, (name, verdict)) in _typeRefs)
            {
                if (verdict.Access != ApiAccess.Denied || _reportedTypes.Contains(h)) continue;
                if (reasons.Add(verdict.Reason!)) Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", default, -1, null, verdict.Reason);
            }
        }

        void CheckReferences()
        {
            foreach (var h in _md.AssemblyReferences)
            {
                var name = _md.GetString(_md.GetAssemblyReference(h).Name);
                if (!AllowedAssemblyReferences.Contains(name))
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
                    Report("ES0002", $"forbidden construct: explicit struct layout on {typeName} ({"unsafe memory access is not allowed"})", default, -1, null);

                // The compiler indexes an inline array by the attribute's length; only the runtime's own layout matches that.
                var layout = type.GetLayout();
                if ((layout.Size != 0 || (type.Attributes & TypeAttributes.LayoutMask) == TypeAttributes.ExplicitLayout)
                    && type.GetCustomAttributes().Any(a => AttributeTypeName(a) == "System.Runtime.CompilerServices.InlineArrayAttribute"))
                    Report("ES0002", $"forbidden construct: [InlineArray] with an explicit size or layout on {typeName} (unsafe memory access is not allowed)", default, -1, null);

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
                CheckGenericStatics(type, typeName);

                foreach (var fh in type.GetFields())
                {
                    var field = _md.GetFieldDefinition(fh);
                    if ((field.Attributes & FieldAttributes.Static) == 0 || (field.Attributes & FieldAttributes.Literal) != 0) continue;
                    if (_patterns.TrustedStaticField(fh) is not null) continue; // constant data, lambda singletons, delegate caches
                    var fieldName = DisplayFieldName(_md.GetString(field.Name));
                    if ((field.Attributes & FieldAttributes.InitOnly) == 0)
                    {
                        Report("ES0002", $"forbidden construct: static mutable field {typeName}.{fieldName} (state shared across calls is not allowed; use const, static readonly of an immutable primitive type, or an instance field)", default, -1, null);
                        continue;
                    }
                    var fieldType = field.DecodeSignature(new SignatureProviders.FieldTypeClassifier(_md), null);
                    if (!fieldType)
                        Report("ES0002", $"forbidden construct: static readonly field {typeName}.{fieldName} of a mutable/reference type (state shared across calls is not allowed; only primitives, string, decimal, enums, DateTime(Offset), TimeSpan, Guid may be static readonly)", default, -1, null);
                }
            }
        }

        /// <summary>
        /// A generic type's static fields exist once per instantiation, created when a call first uses it: a static readonly
        /// string initialised in Hog&lt;T&gt; over many T would allocate at call time, in some batch other tenants wait behind,
        /// where the host cannot run the initialisers ahead (at load) and charge them to their tenant (TenantMemory).
        /// Compiler-generated ones (lambda singletons, delegate caches) hold no data.
        /// </summary>
        void CheckGenericStatics(TypeDefinition type, string typeName)
        {
            if (type.GetGenericParameters().Count == 0) return;
            foreach (var fh in type.GetFields())
            {
                var field = _md.GetFieldDefinition(fh);
                // Static mutable fields are refused anywhere (above).
                if ((field.Attributes & (FieldAttributes.Static | FieldAttributes.InitOnly)) != (FieldAttributes.Static | FieldAttributes.InitOnly)) continue;
                if (_patterns.TrustedStaticField(fh) is not null) continue;
                Report("ES0002", $"forbidden construct: static field {typeName}.{DisplayFieldName(_md.GetString(field.Name))} in a generic type (each instantiation would get its own copy at call time; use const, or a static readonly field of a non-generic type)", default, -1, null);
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
                if (readOnly && (field.DecodeSignature(new SignatureProviders.FieldTypeClassifier(_md), null) || IsImmutableReference(field))) continue;
                Report("ES0002", $"forbidden construct: {(readOnly ? "readonly field of a mutable type" : "mutable field")} {typeName}.{DisplayFieldName(_md.GetString(field.Name))} in {what} (the runtime keeps such objects from one call to the next, so they must be immutable: readonly fields of primitive-like types, converters or exceptions only)", default, -1, null);
            }
        }

        /// <summary>A readonly field holding a converter or an exception (both kept immutable by these rules).</summary>
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
                HandleKind.TypeDefinition => KeptByRuntime((TypeDefinitionHandle)handle) is not null,
                HandleKind.TypeReference => KeptKind(TypeRefName((TypeReferenceHandle)handle)) is not null,
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

        static string? KeptKind(string frameworkBase) => frameworkBase switch
        {
            _ when frameworkBase.StartsWith("System.Text.Json.Serialization.Json", StringComparison.Ordinal)
                   && frameworkBase.Contains("Converter", StringComparison.Ordinal) && !frameworkBase.EndsWith("Attribute", StringComparison.Ordinal) => "a JSON converter",
            "System.Text.Json.JsonNamingPolicy" => "a JSON naming policy",
            _ when frameworkBase.StartsWith("System.", StringComparison.Ordinal) && frameworkBase.EndsWith("Exception", StringComparison.Ordinal) => "an exception type",
            _ => null,
        };

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

        const string InterpolationHandler = "System.Runtime.CompilerServices.DefaultInterpolatedStringHandler";
        const string HandlerCopy = "copies of a DefaultInterpolatedStringHandler share the buffer it rented from the process-wide ArrayPool and would return it twice, so that later renters (the host included) share one array";

        /// <summary>
        /// The compiler only ever uses a DefaultInterpolatedStringHandler in place (ldloca, by reference). A copy — a
        /// ldloc/stloc of it, ldobj/stobj/cpobj, a by-value parameter or return, a field, a generic argument — lets two
        /// handlers return the same pooled array.
        /// </summary>
        void CheckInterpolationHandlerCopies()
        {
            for (var row = 1; row <= _md.GetTableRowCount(TableIndex.TypeSpec); row++)
                if (_md.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(row)).DecodeSignature(F.Instance, null).Contains(InterpolationHandler, StringComparison.Ordinal))
                    Report("ES0002", $"forbidden construct: {InterpolationHandler} as a generic argument ({HandlerCopy})", default, -1, null);
            for (var row = 1; row <= _md.GetTableRowCount(TableIndex.MethodSpec); row++)
                if (_md.GetMethodSpecification(MetadataTokens.MethodSpecificationHandle(row)).DecodeSignature(F.Instance, null).Any(a => a.Contains(InterpolationHandler, StringComparison.Ordinal)))
                    Report("ES0002", $"forbidden construct: {InterpolationHandler} as a generic argument ({HandlerCopy})", default, -1, null);
            foreach (var th in _md.TypeDefinitions)
            {
                var type = _md.GetTypeDefinition(th);
                foreach (var fh in type.GetFields())
                    if (_md.GetFieldDefinition(fh).DecodeSignature(F.Instance, null).Contains(InterpolationHandler, StringComparison.Ordinal))
                        Report("ES0002", $"forbidden construct: field {TypeDefName(th)}.{_md.GetString(_md.GetFieldDefinition(fh).Name)} of type DefaultInterpolatedStringHandler ({HandlerCopy})", default, -1, null);
                foreach (var mh in type.GetMethods())
                {
                    var sig = _md.GetMethodDefinition(mh).DecodeSignature(F.Instance, null);
                    if (sig.ReturnType == InterpolationHandler || sig.ParameterTypes.Contains(InterpolationHandler))
                        Report("ES0002", $"forbidden construct: DefaultInterpolatedStringHandler passed or returned by value ({HandlerCopy})", mh, 0, $"{TypeDefName(th)}.{_md.GetString(_md.GetMethodDefinition(mh).Name)}");
                }
            }
        }

        HashSet<long> HandlerLocals(MethodBodyBlock block)
        {
            var found = new HashSet<long>();
            if (block.LocalSignature.IsNil) return found;
            var locals = _md.GetStandaloneSignature(block.LocalSignature).DecodeLocalSignature(F.Instance, null);
            for (var i = 0; i < locals.Length; i++)
                if (locals[i] == InterpolationHandler) found.Add(i);
            return found;
        }

        void CheckMethodBodies()
        {
            CheckInterpolationHandlerCopies();
            foreach (var (mh, (block, il)) in _bodies)
            {
                var method = _md.GetMethodDefinition(mh);
                var where = $"{TypeDefName(method.GetDeclaringType())}.{_md.GetString(method.Name)}";
                var handlerLocals = HandlerLocals(block);
                for (var i = 0; i < il.Length; i++)
                {
                    var op = il[i].Op;
                    var copiesHandler = op switch
                    {
                        ILOpCode.Ldloc or ILOpCode.Ldloc_s or (>= ILOpCode.Ldloc_0 and <= ILOpCode.Ldloc_3)
                            or ILOpCode.Stloc or ILOpCode.Stloc_s or (>= ILOpCode.Stloc_0 and <= ILOpCode.Stloc_3) => handlerLocals.Contains(il[i].Value),
                        ILOpCode.Ldobj or ILOpCode.Stobj or ILOpCode.Cpobj => F.TypeName(_md, MetadataTokens.EntityHandle(il[i].Token)) == InterpolationHandler,
                        _ => false,
                    };
                    if (copiesHandler)
                        Report("ES0002", $"forbidden construct: copy of a DefaultInterpolatedStringHandler ({HandlerCopy})", mh, il[i].Offset, where);
                    switch (op)
                    {
                        case ILOpCode.Calli:
                            Report("ES0001", "forbidden API: calli (function pointers are not allowed)", mh, il[i].Offset, where);
                            continue;
                        case ILOpCode.Jmp or ILOpCode.Arglist or ILOpCode.Mkrefany or ILOpCode.Refanyval or ILOpCode.Refanytype:
                            Report("ES0001", $"forbidden API: IL instruction {op.ToString().ToLowerInvariant()} (not allowed)", mh, il[i].Offset, where);
                            continue;
                    }
                    if (il[i].Token != 0) CheckToken(il[i].Token, mh, i, il[i].Offset, where);
                }
            }
        }

        void CheckToken(int token, MethodDefinitionHandle method, int index, int offset, string where)
        {
            var handle = MetadataTokens.EntityHandle(token);
            switch (handle.Kind)
            {
                case HandleKind.MethodSpecification:
                    var spec = _md.GetMethodSpecification((MethodSpecificationHandle)handle);
                    if (spec.Method.Kind == HandleKind.MemberReference)
                        CheckMemberUse((MemberReferenceHandle)spec.Method, method, index, offset, where);
                    CheckTypeRefsInBlob(handle, method, offset, where);
                    break;
                case HandleKind.MemberReference:
                    CheckMemberUse((MemberReferenceHandle)handle, method, index, offset, where);
                    break;
                case HandleKind.TypeReference:
                    CheckTypeUse((TypeReferenceHandle)handle, method, offset, where);
                    break;
                case HandleKind.TypeSpecification:
                    CheckTypeRefsInBlob(handle, method, offset, where);
                    break;
            }
        }

        void CheckMemberUse(MemberReferenceHandle h, MethodDefinitionHandle method, int index, int offset, string where)
        {
            var use = _memberRefs[h];
            var member = _md.GetMemberReference(h);
            // The types in the member's own signature (e.g. MethodBase in Exception.TargetSite) are used here too.
            var signatureTypes = new SignatureProviders.TypeRefCollector();
            if (member.GetKind() == MemberReferenceKind.Method) member.DecodeMethodSignature(signatureTypes, null);
            else member.DecodeFieldSignature(signatureTypes, null);
            if (use.Verdict.Access == ApiAccess.Denied
                || (use.Verdict.Access == ApiAccess.CompilerOnly && !_patterns.IsTrustedUse(method, index, use.TypeKey, use.Member)))
            {
                Report("ES0001", $"forbidden API: {use.Name} ({use.Verdict.Reason})", method, offset, where, use.Verdict.Reason);
                _reportedMembers.Add(h);
                MarkParentReported(h);
                _reportedTypes.UnionWith(signatureTypes.Found); // part of the same refusal
                return;
            }
            if (member.Parent.Kind == HandleKind.TypeReference) CheckTypeUse((TypeReferenceHandle)member.Parent, method, offset, where);
            else if (member.Parent.Kind == HandleKind.TypeSpecification) CheckTypeRefsInBlob(member.Parent, method, offset, where);
            foreach (var th in signatureTypes.Found) CheckTypeUse(th, method, offset, where);
        }

        /// <summary>A denied type is reported once per method that uses it (Report de-duplicates within a method).</summary>
        void CheckTypeUse(TypeReferenceHandle h, MethodDefinitionHandle method, int offset, string where)
        {
            var (name, verdict) = _typeRefs[h];
            if (verdict.Access != ApiAccess.Denied) return;
            _reportedTypes.Add(h);
            Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", method, offset, where, verdict.Reason);
        }

        /// <summary>Finds type references inside a generic instantiation (TypeSpec / MethodSpec signature) to attribute a location to them.</summary>
        void CheckTypeRefsInBlob(EntityHandle specHandle, MethodDefinitionHandle method, int offset, string where)
        {
            var collector = new SignatureProviders.TypeRefCollector();
            try
            {
                if (specHandle.Kind == HandleKind.TypeSpecification)
                    _md.GetTypeSpecification((TypeSpecificationHandle)specHandle).DecodeSignature(collector, null);
                else if (specHandle.Kind == HandleKind.MethodSpecification)
                    _md.GetMethodSpecification((MethodSpecificationHandle)specHandle).DecodeSignature(collector, null);
            }
            catch (BadImageFormatException)
            {
                return;
            }
            foreach (var th in collector.Found)
            {
                if (_typeRefs.ContainsKey(th)) CheckTypeUse(th, method, offset, where);
            }
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

        void Report(string code, string message, MethodDefinitionHandle method, int offset, string? where, string? reason = null, string? typeName = null)
        {
            // The same API used several times in one method is reported once for that method.
            var key = message + "|" + (method.IsNil ? "" : MetadataTokens.GetToken(method).ToString());
            if (!_seen.Add(key)) return;
            Violations.Add(new Violation(code, message, method, offset, where, reason, typeName));
        }
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
