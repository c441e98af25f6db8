using System.Collections.Immutable;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace EventSourcing.Runtime.Compilation;

/// <summary>One refusal found in an emitted assembly.</summary>
/// <param name="Code">ES0001 (forbidden API) or ES0002 (forbidden construct).</param>
/// <param name="Message">e.g. "forbidden API: System.IO.File.ReadAllText (file system access is not allowed)".</param>
/// <param name="Method">The method whose IL uses it, when known.</param>
/// <param name="IlOffset">The IL offset within <paramref name="Method"/>, when known.</param>
/// <param name="Context">"in Type.Method" style context for messages without a source location.</param>
/// <param name="Reason">The policy reason, for de-duplicating follow-on reports.</param>
public sealed record Violation(string Code, string Message, MethodDefinitionHandle Method, int IlOffset, string? Context, string? Reason = null);

/// <summary>
/// Checks a compiled tenant assembly against <see cref="ApiPolicy"/> by walking its metadata with
/// System.Reflection.Metadata: assembly/module references, every TypeReference, MemberReference,
/// MethodSpecification and TypeSpecification used, every IL instruction's token, method and field
/// definitions (P/Invoke, internal calls, module initializers, finalizers, static mutable fields).
/// Nothing is loaded or run.
/// </summary>
public static class AssemblyVerifier
{
    /// <summary>Assemblies tenant code may reference (the compile reference set).</summary>
    public static readonly ImmutableHashSet<string> AllowedAssemblyReferences = ImmutableHashSet.Create(StringComparer.OrdinalIgnoreCase,
        "System.Runtime", "System.Collections", "System.Collections.Immutable", "System.Linq", "System.Memory",
        "System.Runtime.Numerics", "System.Text.Json", "System.Text.RegularExpressions", "System.Text.Encodings.Web",
        "System.Private.CoreLib", "netstandard", "EventSourcing.Sdk");

    public static IReadOnlyList<Violation> Verify(byte[] image)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        if (!pe.HasMetadata) return new[] { new Violation("ES0002", "not a .NET assembly", default, -1, null) };
        var md = pe.GetMetadataReader();
        var walker = new Walker(pe, md);
        walker.Run();
        return walker.Violations;
    }

    sealed class Walker
    {
        readonly PEReader _pe;
        readonly MetadataReader _md;
        public readonly List<Violation> Violations = new();
        readonly HashSet<string> _seen = new(StringComparer.Ordinal);

        // Verdicts by handle, computed once.
        readonly Dictionary<TypeReferenceHandle, (string Name, ApiVerdict Verdict)> _typeRefs = new();
        readonly Dictionary<MemberReferenceHandle, (string Name, ApiVerdict Verdict)> _memberRefs = new();
        // Denied type refs already reported through a member (so the type-level pass does not repeat them).
        readonly HashSet<TypeReferenceHandle> _reportedTypes = new();
        readonly HashSet<MemberReferenceHandle> _reportedMembers = new();

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

            CheckDefinitions();
            CheckMethodBodies();
            CheckAttributeTypeArguments();

            // Whatever was not seen in IL (signatures, attributes, MethodImpls…) is reported without a location,
            // unless something was already reported for the same reason (e.g. MethodInfo after Type.GetMethod).
            var reasons = Violations.Select(v => v.Reason).ToHashSet(StringComparer.Ordinal);
            foreach (var (h, (name, verdict)) in _memberRefs)
            {
                if (verdict.Access != ApiAccess.Denied || _reportedMembers.Contains(h)) continue;
                MarkParentReported(h);
                if (reasons.Add(verdict.Reason!)) Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", default, -1, null, verdict.Reason);
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
                var compilerGenerated = IsCompilerGenerated(th);

                if ((type.Attributes & TypeAttributes.LayoutMask) == TypeAttributes.ExplicitLayout && !compilerGenerated)
                    Report("ES0002", $"forbidden construct: explicit struct layout on {typeName} ({"unsafe memory access is not allowed"})", default, -1, null);

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
                        && method.GetParameters().Count == 0 && !compilerGenerated)
                        Report("ES0002", $"forbidden construct: finalizer on {typeName} (finalizers run outside any request and are not allowed)", mh, 0, null);

                    foreach (var ah in method.GetCustomAttributes())
                    {
                        if (AttributeTypeName(ah) == "System.Runtime.CompilerServices.ModuleInitializerAttribute")
                            Report("ES0002", $"forbidden construct: [ModuleInitializer] on {where} (module initializers are not allowed)", mh, 0, null, "module initializers are not allowed");
                    }
                }

                if (compilerGenerated) continue;
                foreach (var fh in type.GetFields())
                {
                    var field = _md.GetFieldDefinition(fh);
                    if ((field.Attributes & FieldAttributes.Static) == 0 || (field.Attributes & FieldAttributes.Literal) != 0) continue;
                    var fieldName = DisplayFieldName(_md.GetString(field.Name));
                    if ((field.Attributes & FieldAttributes.InitOnly) == 0)
                    {
                        Report("ES0002", $"forbidden construct: static mutable field {typeName}.{fieldName} (state shared across calls is not allowed; use const, static readonly of an immutable primitive type, or an instance field)", default, -1, null);
                        continue;
                    }
                    var fieldType = field.DecodeSignature(new FieldTypeClassifier(_md), null);
                    if (!fieldType)
                        Report("ES0002", $"forbidden construct: static readonly field {typeName}.{fieldName} of a mutable/reference type (state shared across calls is not allowed; only primitives, string, decimal, enums, DateTime(Offset), TimeSpan, Guid may be static readonly)", default, -1, null);
                }
            }
        }

        /// <summary>typeof(X) in attribute arguments is stored as a type name string, not a TypeReference; check those names too.</summary>
        void CheckAttributeTypeArguments()
        {
            var provider = new AttributeTypeNameProvider();
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

        void CheckMethodBodies()
        {
            foreach (var th in _md.TypeDefinitions)
            {
                var type = _md.GetTypeDefinition(th);
                var compilerGenerated = IsCompilerGenerated(th);
                foreach (var mh in type.GetMethods())
                {
                    var method = _md.GetMethodDefinition(mh);
                    if (method.RelativeVirtualAddress == 0) continue;
                    var body = _pe.GetMethodBody(method.RelativeVirtualAddress);
                    ScanIl(body.GetILReader(), mh, compilerGenerated, $"{TypeDefName(th)}.{_md.GetString(method.Name)}");
                }
            }
        }

        void ScanIl(BlobReader il, MethodDefinitionHandle method, bool compilerGenerated, string where)
        {
            while (il.RemainingBytes > 0)
            {
                var offset = il.Offset;
                int code = il.ReadByte();
                if (code == 0xFE) code = 0xFE00 | il.ReadByte();
                var op = (ILOpCode)code;
                switch (op)
                {
                    case ILOpCode.Calli:
                        il.ReadInt32();
                        Report("ES0001", "forbidden API: calli (function pointers are not allowed)", method, offset, where);
                        break;
                    case ILOpCode.Jmp:
                    case ILOpCode.Arglist:
                    case ILOpCode.Mkrefany:
                    case ILOpCode.Refanyval:
                    case ILOpCode.Refanytype:
                        if (op is ILOpCode.Jmp or ILOpCode.Mkrefany or ILOpCode.Refanyval) il.ReadInt32();
                        Report("ES0001", $"forbidden API: IL instruction {op.ToString().ToLowerInvariant()} (not allowed)", method, offset, where);
                        break;
                    case ILOpCode.Switch:
                    {
                        var n = il.ReadUInt32();
                        for (var i = 0; i < n; i++) il.ReadInt32();
                        break;
                    }
                    default:
                        switch (OperandSize(op))
                        {
                            case 0: break;
                            case 1: il.ReadByte(); break;
                            case 2: il.ReadUInt16(); break;
                            case 8: il.ReadInt64(); break;
                            case 4:
                                var token = il.ReadInt32();
                                if (HasTokenOperand(op)) CheckToken(token, method, offset, compilerGenerated, where);
                                break;
                        }
                        break;
                }
            }
        }

        void CheckToken(int token, MethodDefinitionHandle method, int offset, bool compilerGenerated, string where)
        {
            var handle = MetadataTokens.EntityHandle(token);
            switch (handle.Kind)
            {
                case HandleKind.MethodSpecification:
                    var spec = _md.GetMethodSpecification((MethodSpecificationHandle)handle);
                    if (spec.Method.Kind == HandleKind.MemberReference)
                        CheckMemberUse((MemberReferenceHandle)spec.Method, method, offset, compilerGenerated, where);
                    CheckTypeRefsInBlob(handle, method, offset, where);
                    break;
                case HandleKind.MemberReference:
                    CheckMemberUse((MemberReferenceHandle)handle, method, offset, compilerGenerated, where);
                    break;
                case HandleKind.TypeReference:
                    CheckTypeUse((TypeReferenceHandle)handle, method, offset, where);
                    break;
                case HandleKind.TypeSpecification:
                    CheckTypeRefsInBlob(handle, method, offset, where);
                    break;
            }
        }

        void CheckMemberUse(MemberReferenceHandle h, MethodDefinitionHandle method, int offset, bool compilerGenerated, string where)
        {
            var (name, verdict) = _memberRefs[h];
            var member = _md.GetMemberReference(h);
            if (verdict.Access == ApiAccess.Denied
                || (verdict.Access == ApiAccess.CompilerOnly && !compilerGenerated))
            {
                Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", method, offset, where, verdict.Reason);
                _reportedMembers.Add(h);
                MarkParentReported(h);
            }
            else if (member.Parent.Kind == HandleKind.TypeReference)
            {
                CheckTypeUse((TypeReferenceHandle)member.Parent, method, offset, where);
            }
            else if (member.Parent.Kind == HandleKind.TypeSpecification)
            {
                CheckTypeRefsInBlob(member.Parent, method, offset, where);
            }
        }

        void CheckTypeUse(TypeReferenceHandle h, MethodDefinitionHandle method, int offset, string where)
        {
            var (name, verdict) = _typeRefs[h];
            if (verdict.Access == ApiAccess.Denied && _reportedTypes.Add(h))
                Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", method, offset, where, verdict.Reason);
        }

        /// <summary>Finds type references inside a generic instantiation (TypeSpec / MethodSpec signature) to attribute a location to them.</summary>
        void CheckTypeRefsInBlob(EntityHandle specHandle, MethodDefinitionHandle method, int offset, string where)
        {
            var collector = new TypeRefCollector();
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

        (string Name, ApiVerdict Verdict) MemberVerdict(MemberReferenceHandle h)
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
                        return (memberName, ApiVerdict.Allow); // a member of one of the tenant's own generic types, or an array
                    break;
                case HandleKind.ModuleReference:
                    return ($"{_md.GetString(_md.GetModuleReference((ModuleReferenceHandle)member.Parent).Name)}::{memberName}",
                        ApiVerdict.Deny("native code is not allowed"));
                default:
                    return (memberName, ApiVerdict.Allow); // TypeDefinition / MethodDefinition parents: the tenant's own code
            }
            var verdict = ApiPolicy.CheckMember(KeyName(member.Parent), typeVerdict, memberName);
            return ($"{typeName}.{DisplayMemberName(memberName)}", verdict);
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

        bool IsCompilerGenerated(TypeDefinitionHandle h)
        {
            while (!h.IsNil)
            {
                var type = _md.GetTypeDefinition(h);
                if (_md.GetString(type.Name).Contains('<')) return true;
                h = type.GetDeclaringType();
            }
            return false;
        }

        string? AttributeTypeName(CustomAttributeHandle h)
        {
            var ctor = _md.GetCustomAttribute(h).Constructor;
            if (ctor.Kind != HandleKind.MemberReference) return null;
            var parent = _md.GetMemberReference((MemberReferenceHandle)ctor).Parent;
            return parent.Kind == HandleKind.TypeReference ? TypeRefName((TypeReferenceHandle)parent) : null;
        }

        void Report(string code, string message, MethodDefinitionHandle method, int offset, string? where, string? reason = null)
        {
            // The same API used several times in one method is reported once for that method.
            var key = message + "|" + (method.IsNil ? "" : MetadataTokens.GetToken(method).ToString());
            if (!_seen.Add(key)) return;
            Violations.Add(new Violation(code, message, method, offset, where, reason));
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

    static bool HasTokenOperand(ILOpCode op) => op switch
    {
        ILOpCode.Ldstr => false,
        ILOpCode.Ldc_i4 or ILOpCode.Ldc_r4 => false,
        ILOpCode.Br or ILOpCode.Brfalse or ILOpCode.Brtrue or ILOpCode.Beq or ILOpCode.Bge or ILOpCode.Bgt or ILOpCode.Ble
            or ILOpCode.Blt or ILOpCode.Bne_un or ILOpCode.Bge_un or ILOpCode.Bgt_un or ILOpCode.Ble_un or ILOpCode.Blt_un
            or ILOpCode.Leave => false,
        _ => true,
    };

    /// <summary>Operand size in bytes of an IL opcode (switch is handled by the caller).</summary>
    static int OperandSize(ILOpCode op)
    {
        switch (op)
        {
            case ILOpCode.Ldarg_s: case ILOpCode.Ldarga_s: case ILOpCode.Starg_s: case ILOpCode.Ldloc_s:
            case ILOpCode.Ldloca_s: case ILOpCode.Stloc_s: case ILOpCode.Ldc_i4_s: case ILOpCode.Br_s:
            case ILOpCode.Brfalse_s: case ILOpCode.Brtrue_s: case ILOpCode.Beq_s: case ILOpCode.Bge_s:
            case ILOpCode.Bgt_s: case ILOpCode.Ble_s: case ILOpCode.Blt_s: case ILOpCode.Bne_un_s:
            case ILOpCode.Bge_un_s: case ILOpCode.Bgt_un_s: case ILOpCode.Ble_un_s: case ILOpCode.Blt_un_s:
            case ILOpCode.Leave_s: case ILOpCode.Unaligned: case (ILOpCode)0xFE19 /* no. */:
                return 1;
            case ILOpCode.Ldarg: case ILOpCode.Ldarga: case ILOpCode.Starg: case ILOpCode.Ldloc:
            case ILOpCode.Ldloca: case ILOpCode.Stloc:
                return 2;
            case ILOpCode.Ldc_i8: case ILOpCode.Ldc_r8:
                return 8;
            case ILOpCode.Ldc_i4: case ILOpCode.Ldc_r4: case ILOpCode.Br: case ILOpCode.Brfalse: case ILOpCode.Brtrue:
            case ILOpCode.Beq: case ILOpCode.Bge: case ILOpCode.Bgt: case ILOpCode.Ble: case ILOpCode.Blt:
            case ILOpCode.Bne_un: case ILOpCode.Bge_un: case ILOpCode.Bgt_un: case ILOpCode.Ble_un: case ILOpCode.Blt_un:
            case ILOpCode.Leave:
            case ILOpCode.Jmp: case ILOpCode.Call: case ILOpCode.Calli: case ILOpCode.Callvirt: case ILOpCode.Cpobj:
            case ILOpCode.Ldobj: case ILOpCode.Ldstr: case ILOpCode.Newobj: case ILOpCode.Castclass: case ILOpCode.Isinst:
            case ILOpCode.Unbox: case ILOpCode.Ldfld: case ILOpCode.Ldflda: case ILOpCode.Stfld: case ILOpCode.Ldsfld:
            case ILOpCode.Ldsflda: case ILOpCode.Stsfld: case ILOpCode.Stobj: case ILOpCode.Box: case ILOpCode.Newarr:
            case ILOpCode.Ldelema: case ILOpCode.Ldelem: case ILOpCode.Stelem: case ILOpCode.Unbox_any:
            case ILOpCode.Refanyval: case ILOpCode.Mkrefany: case ILOpCode.Ldtoken: case ILOpCode.Ldftn:
            case ILOpCode.Ldvirtftn: case ILOpCode.Initobj: case ILOpCode.Constrained: case ILOpCode.Sizeof:
                return 4;
            default:
                return 0;
        }
    }

    /// <summary>Decodes custom attribute values, collecting the serialized names of System.Type arguments
    /// (including the type arguments of generic ones).</summary>
    sealed class AttributeTypeNameProvider : ICustomAttributeTypeProvider<string>
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
    sealed class TypeRefCollector : ISignatureTypeProvider<object?, object?>
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
    sealed class FieldTypeClassifier : ISignatureTypeProvider<bool, object?>
    {
        static readonly HashSet<string> ImmutableValueTypes = new(StringComparer.Ordinal)
        {
            "System.Decimal", "System.DateTime", "System.DateTimeOffset", "System.TimeSpan", "System.Guid",
            "System.DateOnly", "System.TimeOnly", "System.Int128", "System.UInt128", "System.Half",
            "System.StringComparison", "System.StringSplitOptions", "System.MidpointRounding", "System.DayOfWeek",
            "System.DateTimeKind", "System.Globalization.NumberStyles", "System.Globalization.DateTimeStyles",
            "System.Globalization.CompareOptions", "System.Text.RegularExpressions.RegexOptions",
        };

        readonly MetadataReader _md;
        public FieldTypeClassifier(MetadataReader md) => _md = md;

        public bool GetPrimitiveType(PrimitiveTypeCode typeCode) => typeCode switch
        {
            PrimitiveTypeCode.Object or PrimitiveTypeCode.TypedReference or PrimitiveTypeCode.Void => false,
            _ => true, // bool, char, integers, floats, nint, string
        };

        public bool GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind)
        {
            // The tenant's own enums are fine; its own classes/structs are not (mutable or holding references).
            var baseType = reader.GetTypeDefinition(handle).BaseType;
            return baseType.Kind == HandleKind.TypeReference && FullName((TypeReferenceHandle)baseType) == "System.Enum";
        }

        public bool GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind) =>
            ImmutableValueTypes.Contains(FullName(handle));

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
        public bool GetGenericInstantiation(bool genericType, ImmutableArray<bool> typeArguments) => false; // incl. Nullable<T>: kept simple
        public bool GetGenericMethodParameter(object? genericContext, int index) => false;
        public bool GetGenericTypeParameter(object? genericContext, int index) => false;
        public bool GetModifiedType(bool modifier, bool unmodifiedType, bool isRequired) => unmodifiedType;
        public bool GetPinnedType(bool elementType) => false;
    }
}
