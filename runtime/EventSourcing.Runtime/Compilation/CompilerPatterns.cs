using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using F = EventSourcing.Runtime.Compilation.SignatureProviders.Formatter;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Recognises, by their exact shape and never by a name alone, the places where Roslyn itself uses a
/// compiler-only API (<see cref="ApiAccess.CompilerOnly"/>), declares a static field or an explicit-layout
/// type. Everything else — lambdas, closures, local functions, iterators, async state machines, any type
/// whose name contains '&lt;' — is checked exactly like the tenant's own code.
///
/// The trusted shapes, and why each is exact:
/// <list type="number">
/// <item><b>Inline-array helpers</b>: the six methods Roslyn adds to the top-level
/// <c>&lt;PrivateImplementationDetails&gt;</c> class for inline arrays, collection expressions and
/// <c>params</c> spans (<c>InlineArrayAsSpan</c> … <c>InlineArrayFirstElementRefReadOnly</c>). They call
/// <c>Unsafe.As/AsRef/Add</c> and <c>MemoryMarshal.CreateSpan/CreateReadOnlySpan</c>. A helper is trusted
/// only when its signature, its whole body (every opcode and every callee with its instantiation) and its
/// lack of locals and handlers are identical to Roslyn's. C# source cannot declare or name a type called
/// <c>&lt;PrivateImplementationDetails&gt;</c>, so only the compiler's own lowering calls these helpers,
/// with the buffer length it took from the <c>[InlineArray]</c> attribute.</item>
/// <item><b>Iterator thread check</b>: <c>Environment.CurrentManagedThreadId</c> only as
/// <c>ldarg.0; call; stfld F</c> in a constructor, or <c>ldarg.0; ldfld F; call; bne.un/beq</c>, where F is an
/// int field of the same type that nothing else reads, writes or takes the address of. The id never
/// reaches a value the code can compute with; it only decides whether an iterator reuses itself.</item>
/// <item><b>Constant data</b>: <c>RuntimeHelpers.CreateSpan</c>/<c>InitializeArray</c> only directly after
/// <c>ldtoken</c> of an RVA data field of this assembly (C# cannot load a field token; the runtime checks
/// the sizes).</item>
/// <item><b>Static fields</b>: RVA data fields (read-only, no references, used only by the two shapes above or as
/// <c>ldsflda; ldc.i4 n; ReadOnlySpan&lt;byte&gt;(void*, n)</c> with n within the field); stateless singletons
/// (a static readonly field of its own sealed class that has no instance fields, stored only by
/// <c>newobj; stsfld</c> in that class's static constructor: the lambda cache <c>&lt;&gt;9</c>); delegate caches
/// (a static field stored only by the exact lazy-cache sequence, always with the same method and a null or
/// stateless-singleton target, never address-taken: <c>&lt;&gt;9__0_0</c>, <c>&lt;&gt;O.&lt;0&gt;__M</c>).
/// None of them can carry state from one call to the next.</item>
/// <item><b>Explicit layout</b> is harmless without instance fields (Roslyn's
/// <c>__StaticArrayInitTypeSize=N</c> data blocks), whatever the type is called.</item>
/// </list>
/// </summary>
internal sealed class CompilerPatterns
{
    /// <summary>Roslyn's helper methods: name → (signature, body as opcode + callee).</summary>
    static readonly Dictionary<string, (string Signature, (ILOpCode Op, string? Callee)[] Body)> InlineArrayHelpers = new(StringComparer.Ordinal)
    {
        ["InlineArrayAsSpan"] = ("<2>(!!0&, Int32)System.Span`1<!!1>", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ldarg_1, null),
            (ILOpCode.Call, "System.Runtime.InteropServices.MemoryMarshal::CreateSpan<1>(!!0&, Int32)System.Span`1<!!0><!!1>"),
            (ILOpCode.Ret, null),
        }),
        ["InlineArrayAsReadOnlySpan"] = ("<2>(!!0&, Int32)System.ReadOnlySpan`1<!!1>", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAsRef), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ldarg_1, null),
            (ILOpCode.Call, "System.Runtime.InteropServices.MemoryMarshal::CreateReadOnlySpan<1>(!!0&, Int32)System.ReadOnlySpan`1<!!0><!!1>"),
            (ILOpCode.Ret, null),
        }),
        ["InlineArrayElementRef"] = ("<2>(!!0&, Int32)!!1&", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ldarg_1, null), (ILOpCode.Call, UnsafeAdd), (ILOpCode.Ret, null),
        }),
        ["InlineArrayElementRefReadOnly"] = ("<2>(!!0&, Int32)!!1&", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAsRef), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ldarg_1, null), (ILOpCode.Call, UnsafeAdd), (ILOpCode.Ret, null),
        }),
        ["InlineArrayFirstElementRef"] = ("<2>(!!0&)!!1&", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ret, null),
        }),
        ["InlineArrayFirstElementRefReadOnly"] = ("<2>(!!0&)!!1&", new (ILOpCode, string?)[]
        {
            (ILOpCode.Ldarg_0, null), (ILOpCode.Call, UnsafeAsRef), (ILOpCode.Call, UnsafeAs), (ILOpCode.Ret, null),
        }),
    };

    const string UnsafeAs = "System.Runtime.CompilerServices.Unsafe::As<2>(!!0&)!!1&<!!0, !!1>";
    const string UnsafeAsRef = "System.Runtime.CompilerServices.Unsafe::AsRef<1>(!!0&)!!0&<!!0>";
    const string UnsafeAdd = "System.Runtime.CompilerServices.Unsafe::Add<1>(!!0&, Int32)!!0&<!!1>";
    const string CurrentManagedThreadId = "System.Environment::get_CurrentManagedThreadId<0>()Int32";
    const string PrivateImplementationDetails = "<PrivateImplementationDetails>";

    readonly MetadataReader _md;
    readonly IReadOnlyDictionary<MethodDefinitionHandle, (MethodBodyBlock Block, IlInstruction[] Il)> _bodies;
    readonly HashSet<MethodDefinitionHandle> _trustedHelpers = new();
    readonly Dictionary<FieldDefinitionHandle, List<(MethodDefinitionHandle Method, int Index)>> _fieldUses = new();
    readonly Dictionary<FieldDefinitionHandle, bool> _threadIdFields = new();
    readonly Dictionary<FieldDefinitionHandle, bool> _singletons = new();
    readonly Dictionary<int, FieldDefinitionHandle?> _memberFields = new();
    readonly Dictionary<TypeDefinitionHandle, Dictionary<string, List<FieldDefinitionHandle>>> _fieldsByName = new();

    public CompilerPatterns(MetadataReader md, IReadOnlyDictionary<MethodDefinitionHandle, (MethodBodyBlock Block, IlInstruction[] Il)> bodies)
    {
        _md = md;
        _bodies = bodies;
        foreach (var (method, (_, il)) in bodies)
        {
            for (var i = 0; i < il.Length; i++)
            {
                if (il[i].Token == 0 || !IsFieldOrTokenOp(il[i].Op)) continue;
                if (OwnField(il[i].Token) is not { } field) continue;
                if (!_fieldUses.TryGetValue(field, out var uses)) _fieldUses[field] = uses = new();
                uses.Add((method, i));
            }
        }
        FindInlineArrayHelpers();
    }

    /// <summary>Whether a compiler-only member used at <paramref name="index"/> of <paramref name="method"/> is in one of the trusted shapes.</summary>
    public bool IsTrustedUse(MethodDefinitionHandle method, int index, string typeKey, string memberName)
    {
        switch (typeKey)
        {
            case "System.Runtime.CompilerServices.Unsafe":
            case "System.Runtime.InteropServices.MemoryMarshal":
                return _trustedHelpers.Contains(method);
            case "System.Activator" when memberName == "CreateInstance":
                return _bodies[method].Il[index].Op == ILOpCode.Call && NewConstraintLowering.IsTrusted(_md, method, _bodies[method].Il[index].Token);
            case "System.Environment" when memberName == "get_CurrentManagedThreadId":
                return IsThreadIdCheck(method, index);
            case "System.Runtime.CompilerServices.RuntimeHelpers" when memberName is "CreateSpan" or "InitializeArray":
                var il = _bodies[method].Il;
                return index > 0 && il[index - 1].Op == ILOpCode.Ldtoken && OwnField(il[index - 1].Token) is { } data && IsDataField(data);
            default:
                return false;
        }
    }

    /// <summary>Why a static, non-literal field of this assembly is harmless, or null when it is not one of the compiler's shapes.</summary>
    public string? TrustedStaticField(FieldDefinitionHandle h)
    {
        var field = _md.GetFieldDefinition(h);
        if ((field.Attributes & FieldAttributes.HasFieldRVA) != 0) return IsDataField(h) ? "constant data" : null;
        if ((field.Attributes & FieldAttributes.InitOnly) != 0) return IsStatelessSingleton(h) ? "stateless singleton" : null;
        return IsDelegateCache(h) ? "delegate cache" : null;
    }

    /// <summary>Explicit layout can only overlap fields; a type without instance fields has nothing to overlap.</summary>
    public static bool HasNoInstanceFields(MetadataReader md, TypeDefinition type) =>
        type.GetFields().All(f => (md.GetFieldDefinition(f).Attributes & FieldAttributes.Static) != 0);

    void FindInlineArrayHelpers()
    {
        foreach (var th in _md.TypeDefinitions)
        {
            var type = _md.GetTypeDefinition(th);
            if (!type.GetDeclaringType().IsNil || _md.GetString(type.Name) != PrivateImplementationDetails || _md.GetString(type.Namespace).Length != 0)
                continue;
            foreach (var mh in type.GetMethods())
            {
                var method = _md.GetMethodDefinition(mh);
                if (InlineArrayHelpers.TryGetValue(_md.GetString(method.Name), out var shape) && Matches(mh, method, shape))
                    _trustedHelpers.Add(mh);
            }
        }
    }

    bool Matches(MethodDefinitionHandle mh, MethodDefinition method, (string Signature, (ILOpCode Op, string? Callee)[] Body) shape)
    {
        if ((method.Attributes & (MethodAttributes.Static | MethodAttributes.Virtual | MethodAttributes.PinvokeImpl)) != MethodAttributes.Static) return false;
        if (!_bodies.TryGetValue(mh, out var body) || !body.Block.LocalSignature.IsNil || body.Block.ExceptionRegions.Length != 0) return false;
        if (F.Method(method.DecodeSignature(F.Instance, null)) != shape.Signature) return false;
        var il = body.Il;
        if (il.Length != shape.Body.Length) return false;
        for (var i = 0; i < il.Length; i++)
        {
            if (il[i].Op != shape.Body[i].Op) return false;
            if (shape.Body[i].Callee is { } callee && Callee(il[i].Token) != callee) return false;
        }
        return true;
    }

    /// <summary>A call target as text: "Type::Name&lt;arity&gt;(params)ret" plus "&lt;instantiation&gt;" for a generic method instance.</summary>
    string? Callee(int token)
    {
        var h = MetadataTokens.EntityHandle(token);
        switch (h.Kind)
        {
            case HandleKind.MemberReference:
                return F.Member(_md, (MemberReferenceHandle)h);
            case HandleKind.MethodSpecification:
                var spec = _md.GetMethodSpecification((MethodSpecificationHandle)h);
                if (spec.Method.Kind != HandleKind.MemberReference) return null;
                return F.Member(_md, (MemberReferenceHandle)spec.Method) + "<" + string.Join(", ", spec.DecodeSignature(F.Instance, null)) + ">";
            default:
                return null;
        }
    }

    bool IsThreadIdCheck(MethodDefinitionHandle method, int i)
    {
        var il = _bodies[method].Il;
        var declaring = _md.GetMethodDefinition(method).GetDeclaringType();
        // Constructor: this.F = Environment.CurrentManagedThreadId;
        if (_md.GetString(_md.GetMethodDefinition(method).Name) == ".ctor" && i >= 1 && i + 1 < il.Length
            && IlDecoder.IsLoadThis(il[i - 1]) && il[i + 1].Op == ILOpCode.Stfld
            && OwnField(il[i + 1].Token) is { } stored && IsThreadIdField(stored, declaring))
            return true;
        // GetEnumerator: if (this.F == Environment.CurrentManagedThreadId) …
        return i >= 2 && i + 1 < il.Length && IlDecoder.IsLoadThis(il[i - 2]) && il[i - 1].Op == ILOpCode.Ldfld
               && il[i + 1].Op is ILOpCode.Bne_un or ILOpCode.Bne_un_s or ILOpCode.Beq or ILOpCode.Beq_s
               && OwnField(il[i - 1].Token) is { } compared && IsThreadIdField(compared, declaring);
    }

    /// <summary>An instance int field of <paramref name="declaring"/> touched only by the two thread-id shapes.</summary>
    bool IsThreadIdField(FieldDefinitionHandle h, TypeDefinitionHandle declaring)
    {
        var field = _md.GetFieldDefinition(h);
        if (field.GetDeclaringType() != declaring) return false;
        if (_threadIdFields.TryGetValue(h, out var known)) return known;
        var ok = (field.Attributes & FieldAttributes.Static) == 0 && field.DecodeSignature(F.Instance, null) == "Int32";
        foreach (var (method, j) in _fieldUses.GetValueOrDefault(h) ?? new())
        {
            if (!ok) break;
            var il = _bodies[method].Il;
            var inType = _md.GetMethodDefinition(method).GetDeclaringType() == declaring;
            ok = inType && il[j].Op switch
            {
                ILOpCode.Stfld => _md.GetString(_md.GetMethodDefinition(method).Name) == ".ctor" && j >= 2
                                  && IsLoadThis(il, j - 2) && IsCall(il[j - 1], CurrentManagedThreadId),
                ILOpCode.Ldfld => j >= 1 && j + 2 < il.Length && IsLoadThis(il, j - 1) && IsCall(il[j + 1], CurrentManagedThreadId)
                                  && il[j + 2].Op is ILOpCode.Bne_un or ILOpCode.Bne_un_s or ILOpCode.Beq or ILOpCode.Beq_s,
                _ => false,
            };
        }
        _threadIdFields[h] = ok;
        return ok;
    }

    /// <summary>A read-only RVA data block without references, used only as constant data.</summary>
    bool IsDataField(FieldDefinitionHandle h)
    {
        var field = _md.GetFieldDefinition(h);
        const FieldAttributes required = FieldAttributes.Static | FieldAttributes.InitOnly | FieldAttributes.HasFieldRVA;
        if ((field.Attributes & required) != required || DataSize(field) is not { } size) return false;
        foreach (var (method, j) in _fieldUses.GetValueOrDefault(h) ?? new())
        {
            var il = _bodies[method].Il;
            var ok = il[j].Op switch
            {
                ILOpCode.Ldtoken => j + 1 < il.Length && il[j + 1].Op == ILOpCode.Call && Callee(il[j + 1].Token) is { } target
                                    && (target.StartsWith("System.Runtime.CompilerServices.RuntimeHelpers::CreateSpan<1>(System.RuntimeFieldHandle)", StringComparison.Ordinal)
                                        || target == "System.Runtime.CompilerServices.RuntimeHelpers::InitializeArray<0>(System.Array, System.RuntimeFieldHandle)Void"),
                ILOpCode.Ldsflda => j + 2 < il.Length && IlDecoder.IsLoadInt32(il[j + 1].Op) && il[j + 1].Value >= 0 && il[j + 1].Value <= size
                                    && il[j + 2].Op is ILOpCode.Call or ILOpCode.Newobj
                                    && Callee(il[j + 2].Token) is "System.ReadOnlySpan`1<Byte>::.ctor instance <0>(Void*, Int32)Void"
                                        or "System.ReadOnlySpan`1<SByte>::.ctor instance <0>(Void*, Int32)Void"
                                        or "System.ReadOnlySpan`1<Boolean>::.ctor instance <0>(Void*, Int32)Void",
                _ => false,
            };
            if (!ok) return false;
        }
        return true;
    }

    /// <summary>Size in bytes of a data field: a primitive, or a field-less explicit-layout struct of this assembly.</summary>
    int? DataSize(FieldDefinition field)
    {
        var reader = _md.GetBlobReader(field.Signature);
        if (reader.ReadSignatureHeader().Kind != SignatureKind.Field) return null;
        var code = reader.ReadSignatureTypeCode();
        switch (code)
        {
            case SignatureTypeCode.SByte: case SignatureTypeCode.Byte: case SignatureTypeCode.Boolean: return 1;
            case SignatureTypeCode.Int16: case SignatureTypeCode.UInt16: case SignatureTypeCode.Char: return 2;
            case SignatureTypeCode.Int32: case SignatureTypeCode.UInt32: case SignatureTypeCode.Single: return 4;
            case SignatureTypeCode.Int64: case SignatureTypeCode.UInt64: case SignatureTypeCode.Double: return 8;
            case SignatureTypeCode.TypeHandle:
                var th = reader.ReadTypeHandle();
                if (th.Kind != HandleKind.TypeDefinition) return null;
                var type = _md.GetTypeDefinition((TypeDefinitionHandle)th);
                if ((type.Attributes & TypeAttributes.LayoutMask) != TypeAttributes.ExplicitLayout || !HasNoInstanceFields(_md, type)) return null;
                var layout = type.GetLayout();
                return layout.Size > 0 ? layout.Size : null;
            default:
                return null;
        }
    }

    /// <summary>static readonly T F in sealed class T (no instance fields, base object), stored only by newobj in T's static constructor.</summary>
    bool IsStatelessSingleton(FieldDefinitionHandle h)
    {
        if (_singletons.TryGetValue(h, out var known)) return known;
        var field = _md.GetFieldDefinition(h);
        var declaring = field.GetDeclaringType();
        var type = _md.GetTypeDefinition(declaring);
        var arity = type.GetGenericParameters().Count;
        var self = F.TypeName(_md, declaring) + (arity == 0 ? "" : "<" + string.Join(", ", Enumerable.Range(0, arity).Select(i => "!" + i)) + ">");
        var ok = (field.Attributes & (FieldAttributes.Static | FieldAttributes.InitOnly)) == (FieldAttributes.Static | FieldAttributes.InitOnly)
                 && field.DecodeSignature(F.Instance, null) == self
                 && (type.Attributes & (TypeAttributes.Sealed | TypeAttributes.Interface | TypeAttributes.Abstract)) == TypeAttributes.Sealed
                 && type.BaseType.Kind == HandleKind.TypeReference && F.TypeName(_md, type.BaseType) == "System.Object"
                 && HasNoInstanceFields(_md, type);
        foreach (var (method, j) in _fieldUses.GetValueOrDefault(h) ?? new())
        {
            if (!ok) break;
            var il = _bodies[method].Il;
            var m = _md.GetMethodDefinition(method);
            ok = il[j].Op switch
            {
                ILOpCode.Ldsfld => true,
                ILOpCode.Stsfld => m.GetDeclaringType() == declaring && _md.GetString(m.Name) == ".cctor" && j >= 1
                                   && il[j - 1].Op == ILOpCode.Newobj && ConstructedType(il[j - 1].Token) == self,
                _ => false,
            };
        }
        _singletons[h] = ok;
        return ok;
    }

    /// <summary>
    /// Whether a generic type's static constructor is exactly the compiler's closure singleton: <c>newobj instance void
    /// Self::.ctor(); stsfld Self Self::&lt;&gt;9; ret</c>, the field a <see cref="TrustedStaticField"/> stateless singleton and
    /// the constructor <c>ldarg.0; call instance void System.Object::.ctor(); ret</c> — nothing in it can throw an exception
    /// of the tenant's (the runtime would keep it for the instantiation, AssemblyWalker.CheckGenericTypeInitializers).
    /// </summary>
    public bool IsSingletonInitializer(MethodDefinitionHandle cctor)
    {
        if (!_bodies.TryGetValue(cctor, out var body) || body.Block.ExceptionRegions.Length != 0) return false;
        var il = body.Il.Where(i => i.Op != ILOpCode.Nop).ToArray();
        if (il.Length != 3 || il[0].Op != ILOpCode.Newobj || il[1].Op != ILOpCode.Stsfld || il[2].Op != ILOpCode.Ret) return false;
        if (OwnField(il[1].Token) is not { } field || TrustedStaticField(field) != "stateless singleton") return false;
        var declaring = _md.GetMethodDefinition(cctor).GetDeclaringType();
        if (_md.GetFieldDefinition(field).GetDeclaringType() != declaring) return false;
        foreach (var mh in _md.GetTypeDefinition(declaring).GetMethods())
        {
            var m = _md.GetMethodDefinition(mh);
            if (_md.GetString(m.Name) != ".ctor") continue;
            if (!_bodies.TryGetValue(mh, out var ctor) || ctor.Block.ExceptionRegions.Length != 0) return false;
            var code = ctor.Il.Where(i => i.Op != ILOpCode.Nop).ToArray();
            if (code.Length != 3 || code[0].Op != ILOpCode.Ldarg_0 || code[1].Op != ILOpCode.Call || code[2].Op != ILOpCode.Ret
                || Callee(code[1].Token) is not { } callee || !callee.StartsWith("System.Object::.ctor", StringComparison.Ordinal))
                return false;
        }
        return true;
    }

    /// <summary>The type whose parameterless constructor a newobj token calls, or null.</summary>
    string? ConstructedType(int token)
    {
        var h = MetadataTokens.EntityHandle(token);
        if (h.Kind == HandleKind.MethodDefinition)
        {
            var m = _md.GetMethodDefinition((MethodDefinitionHandle)h);
            return _md.GetString(m.Name) == ".ctor" && F.Method(m.DecodeSignature(F.Instance, null)) == "instance <0>()Void"
                ? F.TypeName(_md, m.GetDeclaringType()) : null;
        }
        if (h.Kind != HandleKind.MemberReference) return null;
        var r = _md.GetMemberReference((MemberReferenceHandle)h);
        return _md.GetString(r.Name) == ".ctor" && F.Method(r.DecodeMethodSignature(F.Instance, null)) == "instance <0>()Void"
            ? F.TypeName(_md, r.Parent) : null;
    }

    /// <summary>
    /// A static field written only by the lazy delegate cache Roslyn emits for lambdas and method groups:
    /// <c>ldsfld F; [dup;] brtrue L; [pop;] (ldnull | ldsfld singleton); ldftn M; newobj D(object, native int); [dup;] stsfld F</c>
    /// with L after the store,
    /// every store with the same method and target, never address-taken, and read only by the sequence itself.
    /// </summary>
    bool IsDelegateCache(FieldDefinitionHandle h)
    {
        (int Target, int Method)? seen = null;
        var uses = _fieldUses.GetValueOrDefault(h) ?? new();
        var heads = new HashSet<(MethodDefinitionHandle, int)>();   // ldsfld that start a cache sequence
        var reloads = new HashSet<(MethodDefinitionHandle, int)>(); // ldsfld right after a sequence that left nothing on the stack
        foreach (var (method, j) in uses)
        {
            var il = _bodies[method].Il;
            if (il[j].Op == ILOpCode.Ldsfld) continue;
            if (il[j].Op != ILOpCode.Stsfld) return false;
            int start;
            if (j >= 8 && il[j - 7].Op == ILOpCode.Dup && il[j - 5].Op == ILOpCode.Pop && il[j - 1].Op == ILOpCode.Dup)
                start = j - 8; // value kept on the stack: ldsfld; dup; brtrue; pop; target; ldftn; newobj; dup; stsfld
            else if (j >= 5)
                start = j - 5; // value reloaded afterwards: ldsfld; brtrue; target; ldftn; newobj; stsfld
            else
                return false;
            var withDup = start == j - 8;
            var branch = il[start + (withDup ? 2 : 1)];
            var target = il[j - (withDup ? 4 : 3)];
            var ldftn = il[j - (withDup ? 3 : 2)];
            var newobj = il[j - (withDup ? 2 : 1)];
            if (il[start].Op != ILOpCode.Ldsfld || OwnField(il[start].Token) != h) return false;
            if (branch.Op is not (ILOpCode.Brtrue or ILOpCode.Brtrue_s) || branch.Value < il[j].Next) return false; // skips the store
            int targetKey;
            if (target.Op == ILOpCode.Ldnull) targetKey = 0;
            else if (target.Op == ILOpCode.Ldsfld && OwnField(target.Token) is { } singleton && IsStatelessSingleton(singleton)) targetKey = MetadataTokens.GetToken(singleton);
            else return false;
            if (ldftn.Op != ILOpCode.Ldftn || newobj.Op != ILOpCode.Newobj || !IsDelegateConstructor(newobj.Token)) return false;
            if (seen is { } s && (s.Target != targetKey || s.Method != ldftn.Token)) return false;
            seen = (targetKey, ldftn.Token);
            heads.Add((method, start));
            if (!withDup && j + 1 < il.Length && branch.Value == il[j + 1].Offset) reloads.Add((method, j + 1));
        }
        // Reads only inside the sequence (or the reload just after it), where the field is never null: code cannot
        // observe whether the cache was filled by an earlier call.
        return seen is not null && uses.All(u => _bodies[u.Method].Il[u.Index].Op != ILOpCode.Ldsfld || heads.Contains(u) || reloads.Contains(u));
    }

    bool IsDelegateConstructor(int token)
    {
        var h = MetadataTokens.EntityHandle(token);
        MethodSignature<string> sig;
        string name;
        if (h.Kind == HandleKind.MemberReference)
        {
            var r = _md.GetMemberReference((MemberReferenceHandle)h);
            if (r.GetKind() != MemberReferenceKind.Method) return false;
            (name, sig) = (_md.GetString(r.Name), r.DecodeMethodSignature(F.Instance, null));
        }
        else if (h.Kind == HandleKind.MethodDefinition)
        {
            var m = _md.GetMethodDefinition((MethodDefinitionHandle)h);
            (name, sig) = (_md.GetString(m.Name), m.DecodeSignature(F.Instance, null));
        }
        else return false;
        return name == ".ctor" && F.Method(sig) == "instance <0>(Object, IntPtr)Void";
    }

    static bool IsLoadThis(IlInstruction[] il, int i) => i >= 0 && IlDecoder.IsLoadThis(il[i]);

    bool IsCall(IlInstruction i, string callee) => i.Op == ILOpCode.Call && Callee(i.Token) == callee;

    static bool IsFieldOrTokenOp(ILOpCode op) =>
        op is ILOpCode.Ldfld or ILOpCode.Ldflda or ILOpCode.Stfld or ILOpCode.Ldsfld or ILOpCode.Ldsflda or ILOpCode.Stsfld or ILOpCode.Ldtoken;

    /// <summary>The field definition of this assembly a field token designates (directly, or through a member
    /// reference on one of its own generic type instances), or null.</summary>
    public FieldDefinitionHandle? OwnField(int token)
    {
        var h = MetadataTokens.EntityHandle(token);
        if (h.Kind == HandleKind.FieldDefinition) return (FieldDefinitionHandle)h;
        if (h.Kind != HandleKind.MemberReference) return null;
        if (_memberFields.TryGetValue(token, out var known)) return known;
        var r = _md.GetMemberReference((MemberReferenceHandle)h);
        FieldDefinitionHandle? found = null;
        if (r.GetKind() == MemberReferenceKind.Field)
        {
            TypeDefinitionHandle? owner = r.Parent.Kind switch
            {
                HandleKind.TypeDefinition => (TypeDefinitionHandle)r.Parent,
                HandleKind.TypeSpecification => GenericDefinitionOf((TypeSpecificationHandle)r.Parent),
                _ => null,
            };
            if (owner is { } o && FieldsByName(o).TryGetValue(_md.GetString(r.Name), out var candidates))
            {
                var signature = _md.GetBlobBytes(r.Signature);
                foreach (var f in candidates)
                {
                    if (!_md.GetBlobBytes(_md.GetFieldDefinition(f).Signature).AsSpan().SequenceEqual(signature)) continue;
                    found = f;
                    break;
                }
            }
        }
        _memberFields[token] = found;
        return found;
    }

    /// <summary>A type's fields by name, built once per type (generic types reach their own fields through member references).</summary>
    Dictionary<string, List<FieldDefinitionHandle>> FieldsByName(TypeDefinitionHandle type)
    {
        if (_fieldsByName.TryGetValue(type, out var index)) return index;
        index = new Dictionary<string, List<FieldDefinitionHandle>>(StringComparer.Ordinal);
        foreach (var fh in _md.GetTypeDefinition(type).GetFields())
        {
            var name = _md.GetString(_md.GetFieldDefinition(fh).Name);
            if (!index.TryGetValue(name, out var list)) index[name] = list = new();
            list.Add(fh);
        }
        _fieldsByName[type] = index;
        return index;
    }

    TypeDefinitionHandle? GenericDefinitionOf(TypeSpecificationHandle h)
    {
        var reader = _md.GetBlobReader(_md.GetTypeSpecification(h).Signature);
        if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) return null;
        reader.ReadByte(); // CLASS / VALUETYPE
        var t = reader.ReadTypeHandle();
        return t.Kind == HandleKind.TypeDefinition ? (TypeDefinitionHandle)t : null;
    }
}
