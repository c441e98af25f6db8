using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using EventSourcing.Runtime.Compilation;
using Microsoft.CodeAnalysis;
using Xunit.Abstractions;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// For every API the policy classifies, the same use is compiled in a plain method and in every other place
/// the compiler turns into generated code (lambdas, closures, local functions, iterators, async state machines,
/// static constructors, accessors, operators, generic types and methods), and must get the same verdict
/// everywhere: compiled, or refused with that API named. Run against both reference sets the host can use
/// (the reference pack, and the runtime's own assemblies where System.Private.CoreLib exposes everything).
/// A policy entry without a probe fails <see cref="EveryPolicyEntryHasAProbe"/>.
/// </summary>
public class SameVerdictTests
{
    readonly ITestOutputHelper _output;
    public SameVerdictTests(ITestOutputHelper output) => _output = output;

    /// <summary>One use of an API. <paramref name="Refused"/>: a substring that names the API in every refusal, or null when it compiles;
    /// <paramref name="RefusedWithCoreLib"/> when that differs with System.Private.CoreLib referenced (types outside the reference pack).</summary>
    public sealed record Probe(string Entry, string Statement, string? Refused, string? RefusedWithCoreLib = "same")
    {
        public string? Expected(bool coreLib) => coreLib && RefusedWithCoreLib != "same" ? RefusedWithCoreLib : Refused;
        public override string ToString() => $"{Entry} [{Statement}]";
    }

    static Probe Type(string type, string? refused) => new("type:" + type, $"_ = typeof({type.Replace('+', '.')}).Name;", refused);
    static Probe Allowed(string entry, string statement) => new(entry, statement, null);

    /// <summary>The contexts: name → member declarations of a class named Ctx_{name}, with S standing for the statement.</summary>
    static readonly (string Name, string Members)[] Contexts =
    {
        ("Plain", "public int M() { § return 0; }"),
        ("Lambda", "public int M() { System.Func<int> ctxF = () => { § return 0; }; return ctxF(); }"),
        ("CapturingLambda", "public int M(int ctxK) { System.Func<int> ctxF = () => { § return ctxK; }; return ctxF(); }"),
        ("StaticLocalFunction", "public int M() { return L(); static int L() { § return 0; } }"),
        ("CapturingLocalFunction", "public int M(int ctxK) { return L(); int L() { § return ctxK; } }"),
        ("Iterator", "public System.Collections.Generic.IEnumerable<int> M() { { § } yield return 0; }"),
        ("Async", "public async System.Threading.Tasks.Task<int> M() { { § } return 0; }"),
        ("StaticConstructor", "static Ctx_StaticConstructor() { § }"),
        ("Constructor", "public Ctx_Constructor() { § }"),
        ("PropertyAccessor", "public int P { get { § return 0; } }"),
        ("Operator", "public static int operator +(Ctx_Operator ctxA, Ctx_Operator ctxB) { § return 0; }"),
        ("NestedGenericType", "sealed class Inner<T> { public int M(T ctxT) { § return 0; } }"),
        ("GenericMethod", "public int M<T>(T ctxT) { § return 0; }"),
        ("LambdaInIterator", "public System.Collections.Generic.IEnumerable<int> M(int ctxK) { System.Func<int> ctxF = () => { § return ctxK; }; yield return ctxF(); }"),
    };

    const string Async = "Async";
    const string AsyncRefusal = "async code is not allowed";

    static readonly string[] GenericOnly = { "Span", "ReadOnlySpan", "Memory", "ReadOnlyMemory", "Func", "Predicate", "Comparison", "IEquatable", "IParsable", "ISpanParsable", "IUtf8SpanParsable", "Lazy", "ArraySegment", "IObservable", "IObserver" };

    public static readonly Probe[] Probes = BuildProbes();

    static Probe[] BuildProbes()
    {
        var p = new List<Probe>();

        // Denied namespaces: one type (or member) in each.
        p.Add(new("denied-namespace:System.IO", "_ = System.IO.File.Exists(\"x\");", "System.IO.File"));
        p.Add(new("denied-namespace:System.Net", "_ = System.Net.WebUtility.HtmlEncode(\"x\");", "System.Net.WebUtility"));
        p.Add(new("denied-namespace:System.Reflection", "_ = System.Reflection.IntrospectionExtensions.GetTypeInfo(typeof(object));", "System.Reflection"));
        p.Add(new("denied-namespace:System.Runtime.Loader", "_ = typeof(System.Runtime.Loader.AssemblyLoadContext).Name;", "System.Runtime.Loader"));
        p.Add(new("denied-namespace:System.Threading.Tasks", "_ = System.Threading.Tasks.Task.CompletedTask;", "System.Threading.Tasks.Task"));
        p.Add(new("denied-namespace:System.Threading", "_ = System.Threading.CancellationToken.None;", "System.Threading.CancellationToken"));
        p.Add(new("denied-namespace:System.Timers", "_ = typeof(System.Timers.Timer).Name;", "System.Timers"));
        p.Add(new("denied-namespace:System.Runtime.InteropServices", "_ = typeof(System.Runtime.InteropServices.GCHandle).Name;", "System.Runtime.InteropServices.GCHandle"));
        p.Add(new("denied-namespace:System.Runtime.Intrinsics", "_ = typeof(System.Runtime.Intrinsics.Vector128<int>).Name;", "System.Runtime.Intrinsics"));
        p.Add(new("denied-namespace:System.Runtime.Serialization", "_ = typeof(System.Runtime.Serialization.ISerializable).Name;", "System.Runtime.Serialization.ISerializable"));
        p.Add(new("denied-namespace:System.Runtime.ExceptionServices", "_ = typeof(System.Runtime.ExceptionServices.ExceptionDispatchInfo).Name;", "System.Runtime.ExceptionServices.ExceptionDispatchInfo"));
        p.Add(new("denied-namespace:System.Diagnostics", "_ = typeof(System.Diagnostics.Debug).Name;", "System.Diagnostics.Debug"));
        p.Add(new("denied-namespace:System.Security", "_ = typeof(System.Security.SecurityException).Name;", "System.Security.SecurityException"));
        p.Add(new("denied-namespace:System.Resources", "_ = typeof(System.Resources.ResourceManager).Name;", "System.Resources.ResourceManager"));
        p.Add(new("denied-namespace:System.Linq.Expressions", "_ = typeof(System.Linq.Expressions.Expression).Name;", "System.Linq.Expressions"));
        p.Add(new("denied-namespace:System.CodeDom", "_ = typeof(System.CodeDom.Compiler.IndentedTextWriter).Name;", "System.CodeDom.Compiler.IndentedTextWriter"));
        p.Add(new("denied-namespace:System.Data", "_ = typeof(System.Data.DataSet).Name;", "System.Data"));
        p.Add(new("denied-namespace:System.Xml", "_ = typeof(System.Xml.XmlReader).Name;", "System.Xml"));
        p.Add(new("denied-namespace:System.Text.Json.Serialization.Metadata", "_ = typeof(System.Text.Json.Serialization.Metadata.DefaultJsonTypeInfoResolver).Name;", "System.Text.Json.Serialization.Metadata.DefaultJsonTypeInfoResolver"));
        p.Add(Type("System.CodeDom.Compiler.GeneratedCodeAttribute", null));
        foreach (var (t, toInteger) in new[] { ("XxHash32", "HashToUInt32"), ("XxHash64", "HashToUInt64"), ("XxHash128", "HashToUInt128"), ("XxHash3", "HashToUInt64") })
        {
            p.Add(new("type:System.IO.Hashing." + t, $"_ = System.IO.Hashing.{t}.Hash(new byte[] {{ 1 }}).Length + System.IO.Hashing.{t}.{toInteger}(new byte[] {{ 2 }}).GetHashCode();", null));
            p.Add(new("only-members:System.IO.Hashing." + t, $"var h = new System.IO.Hashing.{t}(); h.Append(new byte[] {{ 1 }});", $"System.IO.Hashing.{t}"));
        }
        // Generator-only APIs (GeneratorOnlyApis): allowed in IL for the source generators' output, refused in the tenant's sources.
        const string Metadata = "System.Text.Json.Serialization.Metadata.";
        p.Add(new("generator-only:System.AppContext", "_ = System.AppContext.GetData(\"x\");", "forbidden API: System.AppContext.GetData"));
        p.Add(new("type:System.AppContext", "_ = System.AppContext.BaseDirectory;", "System.AppContext"));
        p.Add(new("generator-only:System.Type", "_ = typeof(string).GetProperty(\"Length\");", "forbidden API: System.Type.GetProperty"));
        p.Add(new("generator-only:System.Type", "_ = typeof(string).GetConstructor(System.Type.EmptyTypes);", "System.Type"));
        p.Add(new("generator-only:System.Reflection.ICustomAttributeProvider", "System.Reflection.ICustomAttributeProvider? a = null; _ = a!.IsDefined(typeof(int), false);", "System.Reflection.ICustomAttributeProvider"));
        p.Add(new("generator-only:System.Reflection.BindingFlags", "_ = (int)System.Reflection.BindingFlags.Public + typeof(string).GetFields(System.Reflection.BindingFlags.Public).Length;", "System.Type.GetFields"));
        p.Add(new("generator-only:System.Reflection.ParameterModifier", "_ = new System.Reflection.ParameterModifier(1).GetHashCode();", "System.Reflection.ParameterModifier"));
        p.Add(new("generator-only:System.Reflection.Binder", "System.Reflection.Binder? b = null; _ = b!.ChangeType(1, typeof(int), null);", "System.Reflection.Binder"));
        p.Add(new("generator-only:System.Reflection.ConstructorInfo", "System.Reflection.ConstructorInfo? c = null; _ = c!.Invoke(null);", "System.Reflection"));
        p.Add(new("generator-only:System.Reflection.PropertyInfo", "System.Reflection.PropertyInfo? c = null; _ = c!.GetValue(null);", "System.Reflection"));
        p.Add(new("generator-only:System.Reflection.FieldInfo", "System.Reflection.FieldInfo? c = null; _ = c!.GetValue(null);", "System.Reflection"));
        p.Add(new("generator-only:" + Metadata + "JsonTypeInfo", "_ = " + Metadata + "JsonTypeInfo.CreateJsonTypeInfo<int>(new System.Text.Json.JsonSerializerOptions());", "forbidden API: " + Metadata + "JsonTypeInfo.CreateJsonTypeInfo"));
        p.Add(new("generator-only:" + Metadata + "JsonPropertyInfo", Metadata + "JsonPropertyInfo? i = null; _ = i!.Name;", "forbidden API: " + Metadata + "JsonPropertyInfo.Name"));
        p.Add(new("generator-only:" + Metadata + "JsonMetadataServices", "_ = " + Metadata + "JsonMetadataServices.Int32Converter;", "forbidden API: " + Metadata + "JsonMetadataServices.Int32Converter"));
        p.Add(new("generator-only:" + Metadata + "JsonObjectInfoValues", "_ = new " + Metadata + "JsonObjectInfoValues<int>();", "forbidden API: " + Metadata + "JsonObjectInfoValues"));
        p.Add(new("generator-only:" + Metadata + "JsonPropertyInfoValues", "_ = new " + Metadata + "JsonPropertyInfoValues<int>();", "forbidden API: " + Metadata + "JsonPropertyInfoValues"));
        p.Add(new("generator-only:" + Metadata + "JsonCollectionInfoValues", "_ = new " + Metadata + "JsonCollectionInfoValues<int[]>();", "forbidden API: " + Metadata + "JsonCollectionInfoValues"));
        p.Add(new("generator-only:" + Metadata + "JsonParameterInfoValues", "_ = new " + Metadata + "JsonParameterInfoValues();", "forbidden API: " + Metadata + "JsonParameterInfoValues"));
        p.Add(new("generator-only:" + Metadata + "IJsonTypeInfoResolver", Metadata + "IJsonTypeInfoResolver? r = null; _ = r!.GetTypeInfo(typeof(int), new System.Text.Json.JsonSerializerOptions());", "forbidden API: " + Metadata + "IJsonTypeInfoResolver.GetTypeInfo"));
        p.Add(new("generator-only:" + Metadata + "JsonTypeInfoKind", "_ = " + Metadata + "JsonTypeInfoKind.Object.ToString();", "forbidden API: " + Metadata + "JsonTypeInfoKind.Object"));
        p.Add(new("denied-namespace:System.Collections.Concurrent", "_ = typeof(System.Collections.Concurrent.ConcurrentQueue<int>).Name;", "System.Collections.Concurrent"));
        p.Add(new("denied-namespace:Microsoft.CSharp", "_ = typeof(Microsoft.CSharp.RuntimeBinder.Binder).Name;", "Microsoft.CSharp"));
        p.Add(new("denied-namespace:Microsoft.Win32", "_ = typeof(Microsoft.Win32.SafeHandles.SafeFileHandle).Name;", "Microsoft.Win32.SafeHandles.SafeFileHandle"));
        p.Add(new("denied-namespace:Microsoft.VisualBasic", "_ = typeof(Microsoft.VisualBasic.Constants).Name;", "Microsoft.VisualBasic"));
        p.Add(new("denied-namespace:Internal", "_ = typeof(Internal.Console).Name;", "Internal"));

        // Allowed namespaces.
        p.Add(Allowed("allowed-namespace:System.Collections", "_ = new System.Collections.Generic.List<int> { 1 }.Count + new System.Collections.ArrayList().Count;"));
        p.Add(Allowed("allowed-namespace:System.Linq", "_ = System.Linq.Enumerable.Range(0, 3).Sum();"));
        p.Add(Allowed("allowed-namespace:System.Text", "_ = new System.Text.StringBuilder().Append(1).ToString();"));
        p.Add(Allowed("allowed-namespace:System.Globalization", "_ = System.Globalization.CultureInfo.InvariantCulture.Name;"));
        p.Add(Allowed("allowed-namespace:System.Numerics", "_ = System.Numerics.BigInteger.Pow(2, 70).ToString();"));
        p.Add(Allowed("allowed-namespace:System.Buffers", "_ = System.Buffers.SearchValues.Create(\"ab\").Contains('a');"));
        p.Add(Allowed("allowed-namespace:System.Diagnostics.CodeAnalysis", "_ = typeof(System.Diagnostics.CodeAnalysis.NotNullAttribute).Name;"));
        p.Add(Allowed("allowed-namespace:System.Runtime.Versioning", "_ = typeof(System.Runtime.Versioning.SupportedOSPlatformAttribute).Name;"));
        p.Add(Allowed("allowed-namespace:EventSourcing", "_ = new EventSourcing.Event().EventType;"));

        // Types directly in System that are allowed.
        foreach (var entry in ApiPolicy.Entries().Where(e => e.StartsWith("allowed-system-type:", StringComparison.Ordinal)))
        {
            var name = entry["allowed-system-type:System.".Length..];
            var type = name switch
            {
                "Void" => "void",
                "Converter" => "System.Converter<,>",
                _ when GenericOnly.Contains(name) => $"System.{name}<>",
                _ => "System." + name,
            };
            p.Add(Allowed(entry, $"_ = typeof({type}).Name;"));
        }

        // Explicit type rules: allowed ones by typeof, refused ones by typeof or a member.
        foreach (var t in new[]
                 {
                     "System.Diagnostics.DebuggableAttribute", "System.Diagnostics.DebuggableAttribute+DebuggingModes", "System.Diagnostics.DebuggerBrowsableAttribute",
                     "System.Diagnostics.DebuggerBrowsableState", "System.Diagnostics.DebuggerDisplayAttribute", "System.Diagnostics.DebuggerHiddenAttribute",
                     "System.Diagnostics.DebuggerNonUserCodeAttribute", "System.Diagnostics.DebuggerStepThroughAttribute", "System.Diagnostics.DebuggerTypeProxyAttribute",
                     "System.Diagnostics.ConditionalAttribute", "System.Diagnostics.StackTraceHiddenAttribute", "System.Diagnostics.UnreachableException",
                     "System.Runtime.InteropServices.InAttribute", "System.Runtime.InteropServices.OutAttribute",
                     "System.ComponentModel.EditorBrowsableAttribute", "System.ComponentModel.EditorBrowsableState",
                     "System.Runtime.CompilerServices.MethodImplAttribute", "System.Runtime.CompilerServices.MethodImplOptions",
                     "System.Runtime.CompilerServices.DefaultInterpolatedStringHandler", "System.Runtime.CompilerServices.FormattableStringFactory",
                     "System.Runtime.CompilerServices.SwitchExpressionException", "System.Runtime.CompilerServices.ITuple", "System.Runtime.CompilerServices.IsExternalInit",
                     "System.Runtime.CompilerServices.IsVolatile", "System.Runtime.CompilerServices.IsConst", "System.Runtime.CompilerServices.RuntimeFeature",
                     "System.Runtime.CompilerServices.InternalsVisibleToAttribute", "System.Type", "System.Reflection.MemberInfo", "System.Reflection.DefaultMemberAttribute", "System.Delegate",
                     "System.RuntimeTypeHandle", "System.RuntimeFieldHandle", "System.Environment", "System.Runtime.CompilerServices.RuntimeHelpers", "System.Activator", "System.Security.Cryptography.SHA256",
                 })
            p.Add(Type(t, null));
        p.Add(new("type:System.Runtime.InteropServices.OptionalAttribute", "_ = typeof(System.Runtime.InteropServices.OptionalAttribute).Name;",
            "OptionalAttribute", RefusedWithCoreLib: null)); // not in the reference pack's System.Runtime
        p.Add(new("type:System.Runtime.InteropServices.CollectionsMarshal",
            "var list = new System.Collections.Generic.List<int> { 1 }; System.Runtime.InteropServices.CollectionsMarshal.SetCount(list, 3); _ = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(list).Length;",
            "CollectionsMarshal", RefusedWithCoreLib: null)); // only in System.Private.CoreLib; allowed there
        p.Add(Allowed("type:System.Runtime.InteropServices.ImmutableCollectionsMarshal",
            "_ = System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsImmutableArray(new[] { 1, 2 }).Length;"));
        p.Add(new("type:System.Threading.Interlocked", "int x = 0; _ = System.Threading.Interlocked.Increment(ref x);", "Interlocked", RefusedWithCoreLib: null));
        p.Add(new("type:System.Runtime.InteropServices.MemoryMarshal", "System.Span<int> s = new int[1]; _ = System.Runtime.InteropServices.MemoryMarshal.AsBytes(s).Length;",
            "System.Runtime.InteropServices.MemoryMarshal.AsBytes"));
        p.Add(new("type:System.Runtime.CompilerServices.Unsafe", "object o = \"x\"; _ = System.Runtime.CompilerServices.Unsafe.As<string>(o);",
            "System.Runtime.CompilerServices.Unsafe.As"));
        p.Add(new("type:System.Runtime.InteropServices.DllImportAttribute", "_ = typeof(System.Runtime.InteropServices.DllImportAttribute).Name;", "System.Runtime.InteropServices.DllImportAttribute"));
        p.Add(new("type:System.Diagnostics.Stopwatch", "_ = System.Diagnostics.Stopwatch.GetTimestamp();", "Stopwatch"));
        p.Add(new("type:System.Diagnostics.Process", "_ = typeof(System.Diagnostics.Process).Name;", "Process"));
        p.Add(new("type:System.Diagnostics.ProcessStartInfo", "_ = typeof(System.Diagnostics.ProcessStartInfo).Name;", "ProcessStartInfo"));
        p.Add(new("type:System.Buffers.ArrayPool", "_ = System.Buffers.ArrayPool<byte>.Shared;", "System.Buffers.ArrayPool"));
        p.Add(new("type:System.Buffers.MemoryPool", "_ = System.Buffers.MemoryPool<byte>.Shared;", "System.Buffers.MemoryPool"));
        p.Add(new("type:System.Buffers.MemoryHandle", "_ = typeof(System.Buffers.MemoryHandle).Name;", "System.Buffers.MemoryHandle"));
        p.Add(new("type:System.Linq.ParallelEnumerable", "_ = System.Linq.ParallelEnumerable.Range(0, 2);", "ParallelEnumerable"));
        p.Add(new("type:System.Linq.ParallelQuery", "_ = typeof(System.Linq.ParallelQuery<int>).Name;", "ParallelQuery"));
        foreach (var t in new[]
                 {
                     "System.Runtime.CompilerServices.ModuleInitializerAttribute", "System.Runtime.CompilerServices.DynamicAttribute",
                     "System.Runtime.CompilerServices.SkipLocalsInitAttribute", "System.Runtime.CompilerServices.FixedBufferAttribute",
                     "System.Runtime.CompilerServices.FixedAddressValueTypeAttribute", "System.Runtime.CompilerServices.UnsafeAccessorAttribute",
                     "System.Runtime.CompilerServices.UnsafeAccessorKind", "System.Runtime.CompilerServices.UnsafeAccessorTypeAttribute",
                     "System.Runtime.CompilerServices.TypeForwardedToAttribute", "System.Runtime.CompilerServices.TypeForwardedFromAttribute",
                     "System.AppDomain", "System.GC", "System.GCCollectionMode", "System.Random", "System.TimeProvider",
                     "System.WeakReference", "System.ThreadStaticAttribute", "System.ContextStaticAttribute", "System.STAThreadAttribute",
                     "System.MTAThreadAttribute", "System.TypedReference", "System.ArgIterator", "System.RuntimeArgumentHandle", "System.RuntimeMethodHandle",
                     "System.ModuleHandle", "System.MarshalByRefObject", "System.OperatingSystem", "System.LoaderOptimizationAttribute", "System.IAsyncDisposable",
                     "System.IServiceProvider",
                 })
            p.Add(Type(t, t switch { "System.Runtime.CompilerServices.DynamicAttribute" => "DynamicAttribute", "System.IServiceProvider" => "IServiceProvider", _ => t.Replace('+', '.') }));
        p.Add(new("type:System.Runtime.CompilerServices.ConditionalWeakTable", "_ = typeof(System.Runtime.CompilerServices.ConditionalWeakTable<object, object>).Name;", "ConditionalWeakTable"));
        p.Add(new("type:System.Console", "System.Console.WriteLine(\"x\");", "System.Console"));
        // SIMD vectors: absent from the reference pack (CS0234), refused by the policy with System.Private.CoreLib.
        foreach (var t in new[] { "Vector2", "Vector3", "Vector4", "Matrix3x2", "Matrix4x4", "Plane", "Quaternion" })
            p.Add(new("type:System.Numerics." + t, $"_ = typeof(System.Numerics.{t}).Name;", t));
        p.Add(new("type:System.Numerics.Vector", "long[] a = { 1 }; _ = System.Numerics.Vector.LoadUnsafe(ref a[0], (nuint)1000);", "Vector",
            RefusedWithCoreLib: "System.Numerics.Vector.LoadUnsafe"));

        // Members refused on allowed types.
        p.Add(new("denied-member:System.DateTime::get_Now", "_ = System.DateTime.Now;", "System.DateTime.Now"));
        p.Add(new("denied-member:System.DateTime::get_UtcNow", "_ = System.DateTime.UtcNow;", "System.DateTime.UtcNow"));
        p.Add(new("denied-member:System.DateTime::get_Today", "_ = System.DateTime.Today;", "System.DateTime.Today"));
        p.Add(new("denied-member:System.DateTimeOffset::get_Now", "_ = System.DateTimeOffset.Now;", "System.DateTimeOffset.Now"));
        p.Add(new("denied-member:System.DateTimeOffset::get_UtcNow", "_ = System.DateTimeOffset.UtcNow;", "System.DateTimeOffset.UtcNow"));
        p.Add(new("denied-member:System.Guid::NewGuid", "_ = System.Guid.NewGuid();", "System.Guid.NewGuid"));
        p.Add(new("denied-member:System.Guid::CreateVersion7", "_ = System.Guid.CreateVersion7();", "System.Guid.CreateVersion7"));
        p.Add(new("denied-member:System.Exception::get_Data", "_ = new System.Exception().Data;", "System.Exception.Data"));
        p.Add(new("denied-member:System.Exception::set_HelpLink", "new System.Exception().HelpLink = \"x\";", "System.Exception.HelpLink"));
        p.Add(new("denied-member:System.Exception::set_Source", "new System.Exception().Source = \"x\";", "System.Exception.Source"));
        p.Add(new("denied-member:System.String::Intern", "_ = string.Intern(\"x\");", "System.String.Intern"));
        p.Add(new("denied-member:System.String::IsInterned", "_ = string.IsInterned(\"x\");", "System.String.IsInterned"));
        p.Add(new("denied-member:System.Delegate::CreateDelegate", "_ = System.Delegate.CreateDelegate(typeof(System.Action), typeof(string), \"Empty\");", "System.Delegate.CreateDelegate"));
        p.Add(new("denied-member:System.Delegate::DynamicInvoke", "System.Action a = () => { }; a.DynamicInvoke();", "System.Delegate.DynamicInvoke"));
        p.Add(new("denied-member:System.Delegate::get_Method", "System.Action a = () => { }; _ = a.Method;", "System.Delegate.Method"));
        p.Add(new("denied-member:System.Delegate::get_Target", "System.Action a = () => { }; _ = a.Target;", "System.Delegate.Target"));
        // Protected members of Delegate: C# cannot reach them at all (a class cannot derive from Delegate).
        p.Add(new("denied-member:System.Delegate::GetMethodImpl", "System.Action a = () => { }; _ = a.GetMethodImpl();", "GetMethodImpl"));
        p.Add(new("denied-member:System.Delegate::DynamicInvokeImpl", "System.Action a = () => { }; _ = a.DynamicInvokeImpl(null);", "DynamicInvokeImpl"));
        p.Add(new("denied-member:System.Delegate::.ctor", "_ = new System.Delegate(new object(), \"M\");", "Delegate"));
        p.Add(new("denied-member:System.MulticastDelegate::GetMethodImpl", "System.MulticastDelegate a = (System.Action)(() => { }); _ = a.GetMethodImpl();", "GetMethodImpl"));
        p.Add(new("denied-member:System.MulticastDelegate::DynamicInvokeImpl", "System.MulticastDelegate a = (System.Action)(() => { }); _ = a.DynamicInvokeImpl(null);", "DynamicInvokeImpl"));
        p.Add(new("denied-member:System.MulticastDelegate::.ctor", "_ = new System.MulticastDelegate(new object(), \"M\");", "MulticastDelegate"));
        p.Add(new("denied-member:System.Globalization.CultureInfo::set_CurrentCulture", "System.Globalization.CultureInfo.CurrentCulture = System.Globalization.CultureInfo.InvariantCulture;", "System.Globalization.CultureInfo.CurrentCulture"));
        p.Add(new("denied-member:System.Globalization.CultureInfo::set_CurrentUICulture", "System.Globalization.CultureInfo.CurrentUICulture = System.Globalization.CultureInfo.InvariantCulture;", "System.Globalization.CultureInfo.CurrentUICulture"));
        p.Add(new("denied-member:System.Globalization.CultureInfo::set_DefaultThreadCurrentCulture", "System.Globalization.CultureInfo.DefaultThreadCurrentCulture = null;", "System.Globalization.CultureInfo.DefaultThreadCurrentCulture"));
        p.Add(new("denied-member:System.Globalization.CultureInfo::set_DefaultThreadCurrentUICulture", "System.Globalization.CultureInfo.DefaultThreadCurrentUICulture = null;", "System.Globalization.CultureInfo.DefaultThreadCurrentUICulture"));
        p.Add(new("denied-member:System.Text.RegularExpressions.Regex::set_CacheSize", "System.Text.RegularExpressions.Regex.CacheSize = 1;", "System.Text.RegularExpressions.Regex.CacheSize"));
        p.Add(new("denied-member:System.Text.RegularExpressions.Regex::CompileToAssembly", "System.Text.RegularExpressions.Regex.CompileToAssembly(null!, null!);", "CompileToAssembly"));
        p.Add(new("denied-member:System.Text.Encoding::RegisterProvider", "System.Text.Encoding.RegisterProvider(null!);", "System.Text.Encoding.RegisterProvider"));
        p.Add(new("denied-member:System.Threading.Interlocked::MemoryBarrierProcessWide", "System.Threading.Interlocked.MemoryBarrierProcessWide();", "Interlocked"));
        p.Add(new("denied-member:System.Runtime.InteropServices.ImmutableCollectionsMarshal::AsArray",
            "_ = System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsArray(System.Collections.Immutable.ImmutableArray.Create(1));", "ImmutableCollectionsMarshal.AsArray"));
        p.Add(new("denied-member:System.Memory::Pin", "using var h = new System.Memory<int>(new int[1]).Pin();", "System.Memory.Pin"));
        p.Add(new("denied-member:System.ReadOnlyMemory::Pin", "using var h = new System.ReadOnlyMemory<int>(new int[1]).Pin();", "System.ReadOnlyMemory.Pin"));

        // Types whose members are allowed only from a list: one allowed, one refused.
        p.Add(Allowed("only-members:System.Type", "_ = typeof(string).FullName + (typeof(int) == typeof(long));"));
        p.Add(new("only-members:System.Type", "_ = typeof(string).GetMethods();", "System.Type.GetMethods"));
        p.Add(new("only-members:System.Type", "_ = typeof(string).TypeHandle;", "System.Type.TypeHandle"));
        p.Add(Allowed("only-members:System.Reflection.MemberInfo", "_ = typeof(string).Name;"));
        p.Add(new("only-members:System.Reflection.MemberInfo", "_ = typeof(string).MetadataToken;", "MetadataToken"));
        p.Add(Allowed("only-members:System.Runtime.CompilerServices.RuntimeHelpers", "_ = System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(new object()) + (System.Runtime.CompilerServices.RuntimeHelpers.IsReferenceOrContainsReferences<int>() ? 1 : 0);"));
        p.Add(new("only-members:System.Runtime.CompilerServices.RuntimeHelpers", "_ = System.Runtime.CompilerServices.RuntimeHelpers.GetUninitializedObject(typeof(object));", "GetUninitializedObject"));
        p.Add(new("only-members:System.Environment", "_ = System.Environment.ProcessorCount;", "System.Environment.ProcessorCount"));
        p.Add(Allowed("only-members:System.Security.Cryptography.SHA256", "System.Span<byte> h = stackalloc byte[32]; _ = System.Security.Cryptography.SHA256.HashData(new byte[] { 1 }).Length + System.Security.Cryptography.SHA256.HashData(\"a\"u8, h) + (System.Security.Cryptography.SHA256.TryHashData(\"a\"u8, h, out var n) ? n : 0);"));
        p.Add(new("only-members:System.Security.Cryptography.SHA256", "using var s = System.Security.Cryptography.SHA256.Create();", "System.Security.Cryptography.SHA256.Create"));
        p.Add(new("only-members:System.Activator", "_ = System.Activator.CreateInstanceFrom(\"a.dll\", \"T\");", "System.Activator.CreateInstanceFrom"));
        p.Add(new("only-members:System.Environment", "_ = System.Environment.GetEnvironmentVariable(\"HOME\");", "System.Environment.GetEnvironmentVariable"));

        // Addresses: runtime handles, pointers, pinning.
        p.Add(new("only-members:System.RuntimeTypeHandle", "_ = default(System.RuntimeTypeHandle).Value;", "System.RuntimeTypeHandle.Value"));
        p.Add(new("only-members:System.RuntimeTypeHandle", "_ = System.RuntimeTypeHandle.FromIntPtr(16);", "System.RuntimeTypeHandle.FromIntPtr"));
        p.Add(new("only-members:System.RuntimeTypeHandle", "_ = System.RuntimeTypeHandle.ToIntPtr(default);", "System.RuntimeTypeHandle.ToIntPtr"));
        p.Add(new("only-members:System.RuntimeFieldHandle", "_ = default(System.RuntimeFieldHandle).Value;", "System.RuntimeFieldHandle.Value"));
        p.Add(new("only-members:System.RuntimeFieldHandle", "_ = System.RuntimeFieldHandle.FromIntPtr(16);", "System.RuntimeFieldHandle.FromIntPtr"));
        p.Add(new("only-members:System.RuntimeFieldHandle", "_ = System.RuntimeFieldHandle.ToIntPtr(default);", "System.RuntimeFieldHandle.ToIntPtr"));
        p.Add(new("address:Type.GetTypeFromHandle(forged)", "_ = System.Type.GetTypeFromHandle(System.RuntimeTypeHandle.FromIntPtr(16));", "System.RuntimeTypeHandle.FromIntPtr"));
        p.Add(new("address:Buffer.MemoryCopy", "System.Buffer.MemoryCopy(null, null, 0, 0);", "unsafe"));
        p.Add(new("address:Unsafe.AsPointer", "int x = 0; _ = System.Runtime.CompilerServices.Unsafe.AsPointer(ref x);", "unsafe"));
        p.Add(new("address:Unsafe.ByteOffset", "int x = 0, y = 0; _ = System.Runtime.CompilerServices.Unsafe.ByteOffset(ref x, ref y);", "System.Runtime.CompilerServices.Unsafe.ByteOffset"));
        p.Add(Allowed("address:GetHashCode", "_ = new object().GetHashCode() + \"x\".GetHashCode() + System.HashCode.Combine(1, 2);"));

        // System.Runtime.CompilerServices types decided by name rules (attributes yes; async, awaiters, calling conventions, boxes no).
        foreach (var t in new[] { "CallerMemberNameAttribute", "InlineArrayAttribute", "IteratorStateMachineAttribute", "RuntimeWrappedException", "TupleElementNamesAttribute" })
            p.Add(new("name-rule:" + t, $"_ = typeof(System.Runtime.CompilerServices.{t}).Name;", null));
        foreach (var t in new[] { "AsyncTaskMethodBuilder", "TaskAwaiter", "CallConvCdecl", "StrongBox<int>", "AsyncStateMachineAttribute", "YieldAwaitable" })
            p.Add(new("name-rule:" + t, $"_ = typeof(System.Runtime.CompilerServices.{t}).Name;", "System.Runtime.CompilerServices." + t.Split('<')[0]));

        // Compiler-only members, used by hand.
        p.Add(new("compiler-only-member:System.Activator::CreateInstance", "_ = System.Activator.CreateInstance<object>();", "System.Activator.CreateInstance"));
        p.Add(new("compiler-only-member:System.Activator::CreateInstance", "_ = System.Activator.CreateInstance(typeof(object));", "System.Activator.CreateInstance"));
        p.Add(new("compiler-only-member:System.Environment::get_CurrentManagedThreadId", "_ = System.Environment.CurrentManagedThreadId;", "System.Environment.CurrentManagedThreadId"));
        p.Add(new("compiler-only-member:System.Runtime.CompilerServices.RuntimeHelpers::CreateSpan", "_ = System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan<int>(default).Length;", "System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan"));
        p.Add(new("compiler-only-member:System.Runtime.CompilerServices.RuntimeHelpers::InitializeArray", "System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray(new int[1], default);", "System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray"));
        foreach (var (member, statement) in new[]
                 {
                     ("AsRef", "int x = 0; System.Runtime.CompilerServices.Unsafe.AsRef(in x) = 1;"),
                     ("Add", "int[] a = { 1 }; _ = System.Runtime.CompilerServices.Unsafe.Add(ref a[0], 1);"),
                     ("BitCast", "_ = System.Runtime.CompilerServices.Unsafe.BitCast<int, float>(1);"),
                     ("NullRef", "_ = System.Runtime.CompilerServices.Unsafe.IsNullRef(ref System.Runtime.CompilerServices.Unsafe.NullRef<int>());"),
                     ("SizeOf", "_ = System.Runtime.CompilerServices.Unsafe.SizeOf<long>();"),
                     ("Unbox", "object o = 1; System.Runtime.CompilerServices.Unsafe.Unbox<int>(o) = 2;"),
                     ("SkipInit", "System.Runtime.CompilerServices.Unsafe.SkipInit(out int x); _ = x;"),
                     ("ReadUnaligned", "byte b = 0; _ = System.Runtime.CompilerServices.Unsafe.ReadUnaligned<long>(ref b);"),
                 })
            p.Add(new("compiler-only:Unsafe." + member, statement, "System.Runtime.CompilerServices.Unsafe." + member));
        foreach (var (member, statement) in new[]
                 {
                     ("GetReference", "System.ReadOnlySpan<char> s = \"lit\"; _ = System.Runtime.InteropServices.MemoryMarshal.GetReference(s);"),
                     ("CreateSpan", "int x = 0; _ = System.Runtime.InteropServices.MemoryMarshal.CreateSpan(ref x, 100).Length;"),
                     ("Cast", "System.Span<long> s = new long[1]; _ = System.Runtime.InteropServices.MemoryMarshal.Cast<long, int>(s).Length;"),
                     ("AsMemory", "_ = System.Runtime.InteropServices.MemoryMarshal.AsMemory(\"lit\".AsMemory()).Length;"),
                     ("GetArrayDataReference", "_ = System.Runtime.InteropServices.MemoryMarshal.GetArrayDataReference(new int[1]);"),
                     ("TryGetString", "_ = System.Runtime.InteropServices.MemoryMarshal.TryGetString(\"lit\".AsMemory(), out var s, out var i, out var n);"),
                     ("Write", "var b = new byte[8]; long v = 1; System.Runtime.InteropServices.MemoryMarshal.Write(b, in v);"),
                 })
            p.Add(new("compiler-only:MemoryMarshal." + member, statement, "System.Runtime.InteropServices.MemoryMarshal." + member));
        p.AddRange(TimeProbes.All()); // dates, time zones, cultures (TimePolicy)
        return p.ToArray();
    }

    public static TheoryData<string, bool> Cases()
    {
        var data = new TheoryData<string, bool>();
        foreach (var coreLib in new[] { false, true })
        foreach (var probe in Probes)
            data.Add(probe.ToString(), coreLib);
        return data;
    }

    /// <summary>Diagnostics per context for each probe, compiled once for all theory cases, in parallel.</summary>
    static readonly Lazy<(IReadOnlyDictionary<(string, bool), Outcome> Results, TimeSpan Elapsed, int Compiles)> Results = new(CompileAll);

    public sealed record Outcome(Dictionary<string, List<string>> ByContext, List<string> Unattributed, string Source);

    static (IReadOnlyDictionary<(string, bool), Outcome>, TimeSpan, int) CompileAll()
    {
        var compilers = new Dictionary<bool, TenantCompiler>
        {
            [false] = new TenantCompiler(ReferenceSet.References),
            [true] = new TenantCompiler(ReferenceSet.LoadFrom(ReferenceSet.RuntimeDirectory, implementation: true)),
        };
        var work = Probes.SelectMany(p => new[] { (p, false), (p, true) }).ToList();
        var results = new ConcurrentDictionary<(string, bool), Outcome>();
        var clock = Stopwatch.StartNew();
        Parallel.ForEach(work, new ParallelOptions { MaxDegreeOfParallelism = Math.Max(2, Environment.ProcessorCount) }, item =>
        {
            var (probe, coreLib) = item;
            results[(probe.ToString(), coreLib)] = Run(compilers[coreLib], probe);
        });
        return (results, clock.Elapsed, work.Count);
    }

    static Outcome Run(TenantCompiler compiler, Probe probe)
    {
        var source = new StringBuilder("#pragma warning disable CS1998, CS0162, CS8321, CS0219, CS0618, CS0168, CS8600, CS8625\nnamespace Probes;\n");
        var lines = new List<(int From, int To, string Context)>();
        var line = 3;
        foreach (var (name, members) in Contexts)
        {
            var text = $"public sealed class Ctx_{name}\n{{\n    {members.Replace("§", "\n        " + probe.Statement + "\n       ")}\n}}\n";
            var count = text.Count(c => c == '\n');
            lines.Add((line, line + count - 1, name));
            source.Append(text);
            line += count;
        }
        source.Append("public sealed class ProbeReducer : EventSourcing.IReducer<int> { public int Apply(int s, EventSourcing.Event e) => s; }\n");

        var result = compiler.Compile(new[] { new SourceFile("Probe.cs", source.ToString()) }, ImplementationKind.Reducer);
        var byContext = Contexts.ToDictionary(c => c.Name, _ => new List<string>());
        var unattributed = new List<string>();
        foreach (var d in result.Errors)
        {
            var text = d.ToString();
            var context = d.Path == "Probe.cs"
                ? lines.FirstOrDefault(l => d.Line >= l.From && d.Line <= l.To).Context
                : Contexts.Select(c => c.Name).FirstOrDefault(n => text.Contains($"Ctx_{n}.", StringComparison.Ordinal) || text.Contains($"Ctx_{n} ", StringComparison.Ordinal));
            if (context is null) unattributed.Add(text);
            else byContext[context].Add(text);
        }
        if (!result.Ok && result.Errors.Count == 0) unattributed.Add(result.Message ?? "failed without diagnostics");
        return new Outcome(byContext, unattributed, source.ToString());
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void TheSameUseGetsTheSameVerdictEverywhere(string probeName, bool coreLib)
    {
        var probe = Probes.Single(p => p.ToString() == probeName);
        var outcome = Results.Value.Results[(probeName, coreLib)];
        var expected = probe.Expected(coreLib);
        var problems = new List<string>();

        foreach (var (context, diagnostics) in outcome.ByContext)
        {
            // In the async method the refusal of async itself comes on top; elsewhere every diagnostic counts.
            var apiDiagnostics = context == Async ? diagnostics.Where(d => !IsAsyncRefusal(d) || ExpectedIsAsync(expected, d)).ToList() : diagnostics;
            if (context == Async && !diagnostics.Any(IsAsyncRefusal))
                problems.Add($"{context}: the async refusal is missing");
            if (expected is null && apiDiagnostics.Count > 0)
                problems.Add($"{context}: expected to compile, got: {string.Join(" | ", apiDiagnostics)}");
            if (expected is not null && !apiDiagnostics.Any(d => d.Contains(expected, StringComparison.Ordinal)))
                problems.Add($"{context}: expected a refusal naming \"{expected}\", got: {(apiDiagnostics.Count == 0 ? "(compiled)" : string.Join(" | ", apiDiagnostics))}");
        }
        foreach (var d in outcome.Unattributed.Where(d => !IsAsyncRefusal(d)))
            problems.Add("not attributable to a context: " + d);

        Assert.True(problems.Count == 0, $"{probe} ({(coreLib ? "System.Private.CoreLib" : "reference pack")}):\n{string.Join("\n", problems)}\n--- source ---\n{outcome.Source}");
    }

    /// <summary>When the probed API is itself async-related (Task, IAsyncDisposable), its own refusal counts as the API's.</summary>
    static bool ExpectedIsAsync(string? expected, string diagnostic) => expected is not null && diagnostic.Contains(expected, StringComparison.Ordinal);

    /// <summary>The refusal of async as a whole (its builder, Task, or the declaration itself).</summary>
    static bool IsAsyncRefusal(string diagnostic) =>
        diagnostic.Contains(AsyncRefusal, StringComparison.Ordinal)
        || diagnostic.Contains("System.Threading.Tasks.Task", StringComparison.Ordinal) && diagnostic.Contains("threads, tasks", StringComparison.Ordinal);

    [Fact]
    public void EveryPolicyEntryHasAProbe()
    {
        var probed = Probes.Select(p => p.Entry).ToHashSet(StringComparer.Ordinal);
        var missing = ApiPolicy.Entries().Where(e => !probed.Contains(e)).ToList();
        Assert.True(missing.Count == 0, "policy entries without a probe in SameVerdictTests:\n" + string.Join("\n", missing));
    }

    [Fact]
    public void EveryProbedEntryExistsInThePolicy()
    {
        var entries = ApiPolicy.Entries().ToHashSet(StringComparer.Ordinal);
        var extra = new[] { "address:", "compiler-only:", "name-rule:" }; // probes beyond the enumerable entries
        var stale = Probes.Select(p => p.Entry).Where(e => !entries.Contains(e) && !extra.Any(x => e.StartsWith(x, StringComparison.Ordinal))).Distinct().ToList();
        Assert.True(stale.Count == 0, "probes for entries the policy no longer has:\n" + string.Join("\n", stale));
    }

    [Fact]
    public void MatrixSizeAndRunTime()
    {
        var (results, elapsed, compiles) = Results.Value;
        var cells = results.Count * Contexts.Length;
        _output.WriteLine($"same-verdict matrix: {Probes.Length} probes x {Contexts.Length} contexts x 2 reference sets = {cells} cells in {compiles} compiles, {elapsed.TotalSeconds:0.0} s");
        Assert.Equal(Probes.Length * 2, results.Count);
    }
}
