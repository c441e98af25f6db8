namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The allowlist of framework APIs tenant reducers and projections may reference. Checked on the emitted
/// metadata (every TypeReference and MemberReference, compiler-generated ones included), so it does not
/// depend on how the source spelled things. Anything not explicitly allowed is denied.
/// Also compiled into the Roslyn analyzer shipped with the SDK (sdk/analyzers links this file: one table for both),
/// so it keeps to what netstandard2.0 offers or the analyzer's polyfills add.
/// </summary>
public static class ApiPolicy
{
    public const string NotAllowlisted = "not on the allowlist of APIs available to reducers and projections";
    const string Reflection = "reflection is not allowed";
    const string Threads = "threads, tasks, timers and locks are not allowed";
    const string Async = "async code is not allowed";
    const string NonDeterministic = "non-deterministic: use the event's Timestamp/ids instead";
    const string Interop = "interop and native code are not allowed";
    const string UnsafeMemory = "unsafe memory access is not allowed";
    const string Addresses = "runtime handles are memory addresses; only typeof(T) is allowed";
    const string Simd = "SIMD vectors are not allowed (their unchecked loads and stores reach memory outside the buffer)";
    const string OutlivesCall = "exceptions can outlive the call (a failed static initializer is rethrown with the same exception object on every later use), so their mutable members are not allowed";

    /// <summary>Reason for members whose signature has a pointer type (see AssemblyVerifier's pointer rule).</summary>
    public const string Pointers = "pointers are not allowed (unsafe memory access)";

    /// <summary>Namespaces refused as a whole; the longest matching prefix, denied or allowed, decides.</summary>
    static readonly (string Namespace, string Reason)[] DeniedNamespaces =
    {
        ("System.IO", "file system access is not allowed"),
        ("System.Net", "network access is not allowed"),
        ("System.Reflection", Reflection),
        ("System.Runtime.Loader", "assembly loading is not allowed"),
        ("System.Threading.Tasks", Threads),
        ("System.Threading", Threads),
        ("System.Timers", Threads),
        ("System.Runtime.InteropServices", Interop),
        ("System.Runtime.Intrinsics", "hardware intrinsics are not allowed"),
        ("System.Runtime.Serialization", "binary/contract serialization is not allowed"),
        ("System.Runtime.ExceptionServices", "exception-handling services are not allowed"),
        ("System.Diagnostics", "diagnostics, tracing and process APIs are not allowed"),
        ("System.Security", "security APIs are not allowed"),
        ("System.Resources", "resource loading is not allowed"),
        ("System.Linq.Expressions", "expression trees (runtime code generation) are not allowed"),
        ("System.CodeDom", "code generation is not allowed"),
        ("System.Data", "data access is not allowed"),
        ("System.Xml", "XML APIs are not available"),
        ("System.Text.Json.Serialization.Metadata", "JSON contract customization (reflection metadata) is not allowed"),
        ("System.Collections.Concurrent", "concurrent collections are not needed and not allowed"),
        ("Microsoft.CSharp", "dynamic is not allowed"),
        ("Microsoft.Win32", "OS APIs are not allowed"),
        ("Microsoft.VisualBasic", "Visual Basic runtime APIs are not allowed"),
        ("Internal", NotAllowlisted),
    };

    /// <summary>Namespaces allowed as a whole (including sub-namespaces, unless denied above or by a type rule).</summary>
    static readonly string[] AllowedNamespaces =
    {
        "System.Collections",           // System.Collections, .Generic, .Immutable, .ObjectModel, .Frozen
        "System.Linq",
        "System.Text",                  // StringBuilder, Encoding, Rune, RegularExpressions, Json, Unicode, Encodings.Web
        "System.Globalization",
        "System.Numerics",
        "System.Buffers",               // SearchValues, IBufferWriter, Base64 helpers (pools denied below)
        "System.Diagnostics.CodeAnalysis", // nullable attributes, SetsRequiredMembers, UnscopedRef...
        "System.Runtime.Versioning",    // attributes only
        "EventSourcing",
    };

    /// <summary>Explicit rules by full type name (namespace.Name without generic arity; nested types use '+').</summary>
    static readonly Dictionary<string, ApiVerdict> TypeRules = new(StringComparer.Ordinal)
    {
        // System.Diagnostics: only the attributes the compiler emits or people put on types, and UnreachableException.
        ["System.Diagnostics.DebuggableAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggableAttribute+DebuggingModes"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerBrowsableAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerBrowsableState"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerDisplayAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerHiddenAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerNonUserCodeAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerStepThroughAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.DebuggerTypeProxyAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.ConditionalAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.StackTraceHiddenAttribute"] = ApiVerdict.Allow,
        ["System.Diagnostics.UnreachableException"] = ApiVerdict.Allow,
        ["System.Diagnostics.Stopwatch"] = ApiVerdict.Deny(NonDeterministic),
        // Deterministic hashing: the static one-shot SHA256.HashData/TryHashData (members restricted below) keep no state;
        // an instance (SHA256.Create(): a native handle, incremental state) and the rest of System.Security stay refused.
        ["System.Security.Cryptography.SHA256"] = ApiVerdict.Allow,
        // Deterministic non-cryptographic hashing (System.IO.Hashing, a host dependency): the static one-shot members only
        // (members restricted below), which hash the caller's bytes on the stack: no state, no pooled buffer, no shared secret
        // beyond the algorithms' constants. An instance (incremental Append, Append(Stream)) stays refused.
        ["System.IO.Hashing.XxHash32"] = ApiVerdict.Allow,
        ["System.IO.Hashing.XxHash64"] = ApiVerdict.Allow,
        ["System.IO.Hashing.XxHash128"] = ApiVerdict.Allow,
        ["System.IO.Hashing.XxHash3"] = ApiVerdict.Allow,
        ["System.Diagnostics.Process"] = ApiVerdict.Deny("starting or inspecting processes is not allowed"),
        ["System.Diagnostics.ProcessStartInfo"] = ApiVerdict.Deny("starting or inspecting processes is not allowed"),

        // Interop namespace: the modifiers the compiler emits for 'in'/'ref readonly' parameters, and the
        // helpers Roslyn uses to build lists/spans from collection expressions.
        ["System.Runtime.InteropServices.InAttribute"] = ApiVerdict.Allow,
        ["System.Runtime.InteropServices.OutAttribute"] = ApiVerdict.Allow,
        ["System.Runtime.InteropServices.OptionalAttribute"] = ApiVerdict.Allow,
        // Allowed everywhere (was compiler-only): AsSpan/SetCount/GetValueRefOr*/AsBytes(BitArray) give bounds-checked
        // spans and refs into the caller's own List/Dictionary/BitArray, whose backing arrays are managed and typed;
        // SetCount exposes only that list's own old or zeroed slots. Roslyn uses AsSpan/SetCount for `List<T> x = [..]`.
        ["System.Runtime.InteropServices.CollectionsMarshal"] = ApiVerdict.Allow,
        // Roslyn builds `ImmutableArray<T> x = [..]` with AsImmutableArray over a fresh array: allowed everywhere, it only
        // wraps the caller's own array. AsArray (denied below) would expose the array behind any ImmutableArray.
        ["System.Runtime.InteropServices.ImmutableCollectionsMarshal"] = ApiVerdict.Allow,
        // Reinterprets memory, makes refs from spans and spans from refs (string literals become writable): only in
        // Roslyn's exact inline-array helpers.
        ["System.Runtime.InteropServices.MemoryMarshal"] = ApiVerdict.CompilerOnly(UnsafeMemory),
        ["System.Runtime.InteropServices.DllImportAttribute"] = ApiVerdict.Deny("DllImport/extern methods are not allowed"),

        // Threading: Interlocked is allowed everywhere (was compiler-only, for field-like events): atomic reads and
        // writes of a location the caller could already assign, type-safe for every overload; no thread is involved.
        // MemoryBarrierProcessWide (interrupts every core of the machine) is denied below.
        ["System.Threading.Interlocked"] = ApiVerdict.Allow,

        // System.Buffers: shared pools are process-global state; MemoryHandle is a pinned pointer (Memory<T>.Pin).
        ["System.Buffers.ArrayPool"] = ApiVerdict.Deny("shared pools are process-global state and are not allowed"),
        ["System.Buffers.MemoryPool"] = ApiVerdict.Deny("shared pools are process-global state and are not allowed"),
        ["System.Buffers.MemoryHandle"] = ApiVerdict.Deny(UnsafeMemory),

        // SIMD vectors: not in the reference pack's assemblies, but System.Private.CoreLib (the reference set when no
        // Microsoft.NETCore.App.Ref pack is installed, as in the production image) exposes them under System.Numerics,
        // and Vector.LoadUnsafe/StoreUnsafe(ref T, nuint) (Vector2/3/4 too) read and write past the end of any array.
        ["System.Numerics.Vector"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Vector2"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Vector3"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Vector4"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Matrix3x2"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Matrix4x4"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Plane"] = ApiVerdict.Deny(Simd),
        ["System.Numerics.Quaternion"] = ApiVerdict.Deny(Simd),

        // Generated code (and anyone) marks itself with it; an attribute with two strings.
        ["System.CodeDom.Compiler.GeneratedCodeAttribute"] = ApiVerdict.Allow,
        ["System.ComponentModel.EditorBrowsableAttribute"] = ApiVerdict.Allow,
        ["System.ComponentModel.EditorBrowsableState"] = ApiVerdict.Allow,

        ["System.Linq.ParallelEnumerable"] = ApiVerdict.Deny(Threads),
        ["System.Linq.ParallelQuery"] = ApiVerdict.Deny(Threads),

        // System.Runtime.CompilerServices: attributes and helpers the compiler emits (see IsAllowedCompilerServicesType).
        // Type confusion and raw refs: only in Roslyn's exact inline-array helpers.
        ["System.Runtime.CompilerServices.Unsafe"] = ApiVerdict.CompilerOnly(UnsafeMemory),
        ["System.Runtime.CompilerServices.ModuleInitializerAttribute"] = ApiVerdict.Deny("module initializers are not allowed"),
        ["System.Runtime.CompilerServices.DynamicAttribute"] = ApiVerdict.Deny("dynamic is not allowed"),
        ["System.Runtime.CompilerServices.ConditionalWeakTable"] = ApiVerdict.Deny("GC-dependent tables are not allowed"),
        ["System.Runtime.CompilerServices.MethodImplAttribute"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.MethodImplOptions"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.RuntimeHelpers"] = ApiVerdict.Allow, // members restricted below
        ["System.Runtime.CompilerServices.DefaultInterpolatedStringHandler"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.FormattableStringFactory"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.SwitchExpressionException"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.ITuple"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.IsExternalInit"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.IsVolatile"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.IsConst"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.RuntimeFeature"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.SkipLocalsInitAttribute"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.Runtime.CompilerServices.FixedBufferAttribute"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.Runtime.CompilerServices.FixedAddressValueTypeAttribute"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.Runtime.CompilerServices.UnsafeAccessorAttribute"] = ApiVerdict.Deny(Reflection),
        ["System.Runtime.CompilerServices.UnsafeAccessorKind"] = ApiVerdict.Deny(Reflection),
        ["System.Runtime.CompilerServices.UnsafeAccessorTypeAttribute"] = ApiVerdict.Deny(Reflection),
        ["System.Runtime.CompilerServices.InternalsVisibleToAttribute"] = ApiVerdict.Allow,
        ["System.Runtime.CompilerServices.TypeForwardedToAttribute"] = ApiVerdict.Deny(NotAllowlisted),
        ["System.Runtime.CompilerServices.TypeForwardedFromAttribute"] = ApiVerdict.Deny(NotAllowlisted),

        // System: things in allowed-looking places that are not.
        ["System.Console"] = ApiVerdict.Deny("console I/O is not allowed"),
        ["System.Environment"] = ApiVerdict.Allow, // members restricted below
        ["System.AppDomain"] = ApiVerdict.Deny("AppDomain access is not allowed"),
        ["System.AppContext"] = ApiVerdict.Deny("AppContext access is not allowed (process-global state)"),
        ["System.GC"] = ApiVerdict.Deny("controlling the garbage collector is not allowed"),
        ["System.GCCollectionMode"] = ApiVerdict.Deny("controlling the garbage collector is not allowed"),
        ["System.Activator"] = ApiVerdict.Allow, // members restricted below: only the compiler's lowering of new T()
        ["System.Random"] = ApiVerdict.Deny(NonDeterministic),
        ["System.TimeProvider"] = ApiVerdict.Deny(NonDeterministic),
        ["System.WeakReference"] = ApiVerdict.Deny("GC-dependent behaviour is not allowed"),
        ["System.ThreadStaticAttribute"] = ApiVerdict.Deny("thread-static state is not allowed"),
        ["System.ContextStaticAttribute"] = ApiVerdict.Deny("thread-static state is not allowed"),
        ["System.STAThreadAttribute"] = ApiVerdict.Deny(Threads),
        ["System.MTAThreadAttribute"] = ApiVerdict.Deny(Threads),
        ["System.TypedReference"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.ArgIterator"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.RuntimeArgumentHandle"] = ApiVerdict.Deny(UnsafeMemory),
        ["System.RuntimeMethodHandle"] = ApiVerdict.Deny(Reflection),
        ["System.ModuleHandle"] = ApiVerdict.Deny(Reflection),
        ["System.MarshalByRefObject"] = ApiVerdict.Deny(NotAllowlisted),
        ["System.OperatingSystem"] = ApiVerdict.Deny("environment access is not allowed"),
        ["System.LoaderOptimizationAttribute"] = ApiVerdict.Deny(NotAllowlisted),
        ["System.IAsyncDisposable"] = ApiVerdict.Deny(Async),
        ["System.IServiceProvider"] = ApiVerdict.Deny(NotAllowlisted),
        ["System.Type"] = ApiVerdict.Allow, // members restricted below (records emit typeof() for EqualityContract)
        ["System.Reflection.MemberInfo"] = ApiVerdict.Allow, // only .Name (Type.Name binds to MemberInfo.Name)
        ["System.Reflection.DefaultMemberAttribute"] = ApiVerdict.Allow, // Roslyn puts it on every type with an indexer
        ["System.Delegate"] = ApiVerdict.Allow, // members restricted below
        // Needed as types (ldtoken pushes them for typeof and constant data); every member is denied below.
        ["System.RuntimeTypeHandle"] = ApiVerdict.Allow,
        ["System.RuntimeFieldHandle"] = ApiVerdict.Allow,
    };

    /// <summary>Types directly in the System namespace that are allowed (generic arity stripped).</summary>
    static readonly HashSet<string> AllowedSystemTypes = new(StringComparer.Ordinal)
    {
        "Object", "ValueType", "Enum", "Void", "String", "Boolean", "Char", "SByte", "Byte", "Int16", "UInt16",
        "Int32", "UInt32", "Int64", "UInt64", "Int128", "UInt128", "IntPtr", "UIntPtr", "Half", "Single", "Double",
        "Decimal", "DateTime", "DateTimeOffset", "DateTimeKind", "DayOfWeek", "DateOnly", "TimeOnly", "TimeSpan",
        "Guid", "Math", "MathF", "MidpointRounding", "Nullable", "Span", "ReadOnlySpan", "Memory", "ReadOnlyMemory",
        "MemoryExtensions", "ValueTuple", "Tuple", "TupleExtensions", "StringComparer", "StringComparison",
        "StringSplitOptions", "Array", "ArraySegment", "Attribute", "AttributeUsageAttribute", "AttributeTargets",
        "ObsoleteAttribute", "FlagsAttribute", "CLSCompliantAttribute", "ParamArrayAttribute", "Func", "Action",
        "Predicate", "Comparison", "Converter", "MulticastDelegate", "EventArgs", "EventHandler", "IComparable",
        "IEquatable", "IFormattable", "IFormatProvider", "ISpanFormattable", "IUtf8SpanFormattable", "IParsable",
        "ISpanParsable", "IUtf8SpanParsable", "IDisposable", "ICloneable", "IConvertible", "Index", "Range",
        "Convert", "BitConverter", "HashCode", "Lazy", "FormattableString", "Version", "Uri", "UriKind",
        "Base64FormattingOptions", "CharEnumerator", "Buffer",
        "StringNormalizationExtensions", "IObservable", "IObserver", "Exception",
    };

    /// <summary>Members that are refused on otherwise allowed types, by full type name → member name → reason.</summary>
    static readonly Dictionary<string, Dictionary<string, string>> DeniedMembers = new(StringComparer.Ordinal)
    {
        ["System.DateTime"] = new(StringComparer.Ordinal)
        {
            ["get_Now"] = NonDeterministic, ["get_UtcNow"] = NonDeterministic, ["get_Today"] = NonDeterministic,
        },
        ["System.DateTimeOffset"] = new(StringComparer.Ordinal)
        {
            ["get_Now"] = NonDeterministic, ["get_UtcNow"] = NonDeterministic,
        },
        ["System.Guid"] = new(StringComparer.Ordinal)
        {
            ["NewGuid"] = NonDeterministic, ["CreateVersion7"] = NonDeterministic,
        },
        // Data/HelpLink/Source are the only mutable members of framework exceptions: on the exception object the runtime keeps
        // for a failed static initializer they would carry state from one call to the next.
        ["System.Exception"] = new(StringComparer.Ordinal)
        {
            ["get_Data"] = OutlivesCall, ["set_HelpLink"] = OutlivesCall, ["set_Source"] = OutlivesCall,
        },
        ["System.String"] = new(StringComparer.Ordinal)
        {
            ["Intern"] = "string interning is process-global state and is not allowed", ["IsInterned"] = "string interning is process-global state and is not allowed",
        },
        ["System.Delegate"] = new(StringComparer.Ordinal)
        {
            ["CreateDelegate"] = Reflection, ["DynamicInvoke"] = Reflection, ["get_Method"] = Reflection,
            ["get_Target"] = Reflection, ["GetMethodImpl"] = Reflection, ["DynamicInvokeImpl"] = Reflection,
            [".ctor"] = Reflection, // Delegate(object, string) binds a method by name
        },
        ["System.MulticastDelegate"] = new(StringComparer.Ordinal)
        {
            ["GetMethodImpl"] = Reflection, ["DynamicInvokeImpl"] = Reflection, [".ctor"] = Reflection,
        },
        ["System.Threading.Interlocked"] = new(StringComparer.Ordinal)
        {
            ["MemoryBarrierProcessWide"] = "interrupting every processor of the machine is not allowed",
        },
        ["System.Runtime.InteropServices.ImmutableCollectionsMarshal"] = new(StringComparer.Ordinal)
        {
            ["AsArray"] = "exposing the array behind an ImmutableArray is not allowed",
        },
        // Pinning hands out a pointer and leaks a pinned handle when not disposed.
        ["System.Memory"] = new(StringComparer.Ordinal) { ["Pin"] = UnsafeMemory },
        ["System.ReadOnlyMemory"] = new(StringComparer.Ordinal) { ["Pin"] = UnsafeMemory },
        ["System.Globalization.CultureInfo"] = new(StringComparer.Ordinal)
        {
            ["set_CurrentCulture"] = "changing the process culture is not allowed (process-global state)",
            ["set_CurrentUICulture"] = "changing the process culture is not allowed (process-global state)",
            ["set_DefaultThreadCurrentCulture"] = "changing the process culture is not allowed (process-global state)",
            ["set_DefaultThreadCurrentUICulture"] = "changing the process culture is not allowed (process-global state)",
        },
        ["System.Text.RegularExpressions.Regex"] = new(StringComparer.Ordinal)
        {
            ["set_CacheSize"] = "changing the regex cache size is not allowed (process-global state)",
            ["CompileToAssembly"] = "code generation is not allowed",
        },
        ["System.Text.Encoding"] = new(StringComparer.Ordinal)
        {
            ["RegisterProvider"] = "registering encodings is not allowed (process-global state)",
        },
    };

    /// <summary>Types whose members are allowed only from a fixed list (others get the reason).</summary>
    static readonly Dictionary<string, (HashSet<string> Members, string Reason)> OnlyMembers = new(StringComparer.Ordinal)
    {
        ["System.Type"] = (new HashSet<string>(StringComparer.Ordinal)
        {
            "GetTypeFromHandle", "op_Equality", "op_Inequality", "get_Name", "get_FullName", "get_Namespace",
            "ToString", "Equals", "GetHashCode",
        }, Reflection), // not get_TypeHandle: a RuntimeTypeHandle's Value is the address of the type's method table
        ["System.Reflection.MemberInfo"] = (new HashSet<string>(StringComparer.Ordinal) { "get_Name", "ToString", "Equals", "GetHashCode", "op_Equality", "op_Inequality" }, Reflection),
        ["System.Runtime.CompilerServices.RuntimeHelpers"] = (new HashSet<string>(StringComparer.Ordinal)
        {
            "GetSubArray", "EnsureSufficientExecutionStack", "TryEnsureSufficientExecutionStack",
            "IsReferenceOrContainsReferences", "GetHashCode", "Equals",
        }, "runtime helpers are not allowed"),
        ["System.Environment"] = (new HashSet<string>(StringComparer.Ordinal), "environment access is not allowed"),
        ["System.Activator"] = (new HashSet<string>(StringComparer.Ordinal), Reflection),
        ["System.Security.Cryptography.SHA256"] = (new HashSet<string>(StringComparer.Ordinal) { "HashData", "TryHashData" },
            "security APIs are not allowed (only the static one-shot SHA256.HashData/TryHashData over bytes or spans)"),
        ["System.IO.Hashing.XxHash32"] = (XxHashMembers("HashToUInt32"), XxHashOnly),
        ["System.IO.Hashing.XxHash64"] = (XxHashMembers("HashToUInt64"), XxHashOnly),
        ["System.IO.Hashing.XxHash128"] = (XxHashMembers("HashToUInt128"), XxHashOnly),
        ["System.IO.Hashing.XxHash3"] = (XxHashMembers("HashToUInt64"), XxHashOnly),
        // Value/ToIntPtr give the address of runtime data; FromIntPtr turns any number into a handle that
        // RuntimeHelpers.CreateSpan/InitializeArray or Type.GetTypeFromHandle would dereference.
        ["System.RuntimeTypeHandle"] = (new HashSet<string>(StringComparer.Ordinal), Addresses),
        ["System.RuntimeFieldHandle"] = (new HashSet<string>(StringComparer.Ordinal), Addresses),
    };

    const string XxHashOnly = "only the static one-shot XxHash members (Hash, TryHash, HashToUInt*) over bytes or spans; an instance keeps incremental state and reads streams";

    static HashSet<string> XxHashMembers(string toInteger) => new(StringComparer.Ordinal) { "Hash", "TryHash", toInteger };

    /// <summary>Members of otherwise restricted types that only the compiler's own shapes may use (see CompilerPatterns).</summary>
    static readonly Dictionary<string, (HashSet<string> Members, string Reason)> CompilerOnlyMembers = new(StringComparer.Ordinal)
    {
        // Iterators compare the creating thread id when GetEnumerator is called.
        ["System.Environment"] = (new HashSet<string>(StringComparer.Ordinal) { "get_CurrentManagedThreadId" }, "environment access is not allowed"),
        // Constant arrays and spans, directly after ldtoken of the assembly's own data field (a forged field handle
        // would make them read any memory).
        ["System.Runtime.CompilerServices.RuntimeHelpers"] = (new HashSet<string>(StringComparer.Ordinal) { "CreateSpan", "InitializeArray" }, "runtime helpers are not allowed"),
        // new T() under `where T : new()` (or struct): Activator.CreateInstance<T>() with that T only (NewConstraintLowering).
        ["System.Activator"] = (new HashSet<string>(StringComparer.Ordinal) { "CreateInstance" }, Reflection),
    };

    /// <summary>Every explicit entry of the policy as "kind:key", so that a test can insist on a probe for each.</summary>
    internal static IEnumerable<string> Entries()
    {
        foreach (var (ns, _) in DeniedNamespaces) yield return "denied-namespace:" + ns;
        foreach (var ns in AllowedNamespaces) yield return "allowed-namespace:" + ns;
        foreach (var name in AllowedSystemTypes) yield return "allowed-system-type:System." + name;
        foreach (var type in TypeRules.Keys) yield return "type:" + type;
        foreach (var (type, members) in DeniedMembers)
        foreach (var member in members.Keys)
            yield return $"denied-member:{type}::{member}";
        foreach (var type in OnlyMembers.Keys) yield return "only-members:" + type;
        foreach (var entry in GeneratorOnlyApis.Entries()) yield return entry;
        foreach (var (type, (members, _)) in CompilerOnlyMembers)
        foreach (var member in members)
            yield return $"compiler-only-member:{type}::{member}";
        foreach (var entry in TimePolicy.Entries()) yield return entry;
    }

    /// <summary>Full name of a type reference: namespace + "." + name with generic arity stripped; nested types as Outer+Inner.</summary>
    public static string StripArity(string name)
    {
        var tick = name.IndexOf('`');
        return tick < 0 ? name : name.Substring(0, tick); // no range: this file is also compiled for netstandard2.0 (sdk/analyzers)
    }

    /// <summary>Verdict for a type given its (outermost) namespace and its name chain (outer first).</summary>
    public static ApiVerdict CheckType(string ns, IReadOnlyList<string> nameChain)
    {
        var names = new string[nameChain.Count];
        for (var i = 0; i < names.Length; i++) names[i] = StripArity(nameChain[i]);
        var qualified = (ns.Length == 0 ? "" : ns + ".") + string.Join("+", names);
        if (TimePolicy.CheckType(ns, qualified) is { } time) return time; // dates, zones, cultures
        if (GeneratorOnlyApis.TypeVerdict(qualified) is { } generatorOnly) return generatorOnly;

        // Explicit rule for the exact (possibly nested) type, then for its outer types.
        for (var depth = names.Length; depth >= 1; depth--)
        {
            var key = (ns.Length == 0 ? "" : ns + ".") + string.Join("+", names, 0, depth);
            if (TypeRules.TryGetValue(key, out var rule)) return rule;
        }

        var outer = names[0];
        if (ns == "System")
        {
            if (AllowedSystemTypes.Contains(outer) || outer.EndsWith("Exception", StringComparison.Ordinal))
                return ApiVerdict.Allow;
            return ApiVerdict.Deny(NotAllowlisted);
        }
        if (ns == "System.Runtime.CompilerServices")
            return IsAllowedCompilerServicesType(outer) ? ApiVerdict.Allow : ApiVerdict.Deny(CompilerServicesReason(outer));

        // The longest matching prefix decides: System.Diagnostics is denied, System.Diagnostics.CodeAnalysis allowed.
        var (denied, deniedLength) = LongestDeniedPrefix(ns);
        var allowedLength = AllowedNamespaces.Where(a => IsInNamespace(ns, a)).Select(a => a.Length).DefaultIfEmpty(-1).Max();
        if (denied is not null && deniedLength >= allowedLength) return ApiVerdict.Deny(denied);
        return allowedLength >= 0 ? ApiVerdict.Allow : ApiVerdict.Deny(NotAllowlisted);
    }

    /// <summary>Verdict for a member of a type that is itself allowed (or compiler-only).</summary>
    public static ApiVerdict CheckMember(string typeFullName, ApiVerdict typeVerdict, string memberName)
    {
        if (GeneratorOnlyApis.MemberVerdict(typeFullName, memberName) is { } generatorOnly) return generatorOnly;
        if (typeVerdict.Access == ApiAccess.Denied) return typeVerdict;
        if (DeniedMembers.TryGetValue(typeFullName, out var denied) && denied.TryGetValue(memberName, out var reason))
            return ApiVerdict.Deny(reason);
        if (TimePolicy.DeniedMember(typeFullName, memberName) is { } timeReason) return ApiVerdict.Deny(timeReason);
        if (CompilerOnlyMembers.TryGetValue(typeFullName, out var compilerOnly) && compilerOnly.Members.Contains(memberName))
            return ApiVerdict.CompilerOnly(compilerOnly.Reason);
        if (OnlyMembers.TryGetValue(typeFullName, out var only) && !only.Members.Contains(memberName))
            return ApiVerdict.Deny(only.Reason);
        return typeVerdict;
    }

    /// <summary>Reason a namespace (or namespace-qualified name) is refused, or null. Used for hints on
    /// "type or namespace not found" diagnostics, since most refused assemblies are not even referenced.</summary>
    public static string? DeniedNamespaceReason(string qualifiedName)
    {
        var (denied, deniedLength) = LongestDeniedPrefix(qualifiedName);
        var allowedLength = AllowedNamespaces.Where(a => IsInNamespace(qualifiedName, a)).Select(a => a.Length).DefaultIfEmpty(-1).Max();
        return deniedLength >= allowedLength ? denied : null;
    }

    static (string? Reason, int Length) LongestDeniedPrefix(string qualifiedName)
    {
        string? best = null;
        var bestLength = -1;
        foreach (var (prefix, reason) in DeniedNamespaces)
        {
            if (IsInNamespace(qualifiedName, prefix) && prefix.Length > bestLength)
            {
                best = reason;
                bestLength = prefix.Length;
            }
        }
        return (best, bestLength);
    }

    /// <summary>Reason for a well-known refused simple type name (for diagnostics about names that do not resolve
    /// because their assembly is not referenced), with the full name it most likely meant.</summary>
    public static (string FullName, string Reason)? WellKnownForbiddenName(string simpleName) => simpleName switch
    {
        "Console" => ("System.Console", "console I/O is not allowed"),
        "Process" or "ProcessStartInfo" => ("System.Diagnostics." + simpleName, "starting or inspecting processes is not allowed"),
        "Stopwatch" => ("System.Diagnostics.Stopwatch", NonDeterministic),
        "Debug" or "Trace" or "Debugger" => ("System.Diagnostics." + simpleName, "diagnostics, tracing and process APIs are not allowed"),
        "Socket" or "TcpClient" or "TcpListener" or "UdpClient" or "Dns" or "NetworkStream" => ("System.Net.Sockets." + simpleName, "network access is not allowed"),
        "HttpClient" or "HttpClientHandler" or "WebClient" or "WebRequest" or "HttpWebRequest" => ("System.Net." + simpleName, "network access is not allowed"),
        "Thread" or "ThreadPool" or "Timer" or "Monitor" or "Mutex" or "Semaphore" or "SemaphoreSlim" => ("System.Threading." + simpleName, Threads),
        "Task" or "ValueTask" or "Parallel" or "TaskFactory" => ("System.Threading.Tasks." + simpleName, Threads),
        "Marshal" or "GCHandle" or "NativeLibrary" or "NativeMemory" => ("System.Runtime.InteropServices." + simpleName, Interop),
        "DllImport" or "DllImportAttribute" or "LibraryImport" or "LibraryImportAttribute" => ("System.Runtime.InteropServices." + simpleName.Replace("Attribute", "") + "Attribute", "DllImport/extern methods are not allowed"),
        "AssemblyLoadContext" => ("System.Runtime.Loader.AssemblyLoadContext", "assembly loading is not allowed"),
        "Expression" => ("System.Linq.Expressions.Expression", "expression trees (runtime code generation) are not allowed"),
        "File" or "Directory" or "FileStream" or "StreamReader" or "StreamWriter" or "Path" or "FileInfo" or "DirectoryInfo" => ("System.IO." + simpleName, "file system access is not allowed"),
        "ConcurrentDictionary" or "ConcurrentQueue" or "ConcurrentBag" => ("System.Collections.Concurrent." + simpleName, "concurrent collections are not needed and not allowed"),
        _ => null,
    };

    static bool IsInNamespace(string ns, string prefix) =>
        ns.Length >= prefix.Length && ns.StartsWith(prefix, StringComparison.Ordinal) &&
        (ns.Length == prefix.Length || ns[prefix.Length] == '.');

    static bool IsAllowedCompilerServicesType(string name) => name switch
    {
        _ when name.StartsWith("Async", StringComparison.Ordinal) => false,      // async method builders & attributes
        _ when name.Contains("Awaiter", StringComparison.Ordinal) => false,
        _ when name.Contains("Awaitable", StringComparison.Ordinal) => false,
        _ when name.Contains("StateMachine", StringComparison.Ordinal) && name != "IteratorStateMachineAttribute" => false,
        "INotifyCompletion" or "ICriticalNotifyCompletion" => false,
        _ when name.StartsWith("CallConv", StringComparison.Ordinal) => false,   // function pointers
        "StrongBox" or "IStrongBox" or "CallSite" or "Closure" => false,
        _ => name.EndsWith("Attribute", StringComparison.Ordinal)
             || name is "InlineArray" or "IsByRefLike" or "IsUnmanaged"
             || name.EndsWith("Exception", StringComparison.Ordinal),
    };

    static string CompilerServicesReason(string name) =>
        name.StartsWith("Async", StringComparison.Ordinal) || name.Contains("Await", StringComparison.Ordinal)
        || name.Contains("StateMachine", StringComparison.Ordinal) || name.Contains("NotifyCompletion", StringComparison.Ordinal)
            ? Async
            : name.StartsWith("CallConv", StringComparison.Ordinal) ? "function pointers are not allowed" : NotAllowlisted;
}
