using System.Collections.Concurrent;
using System.Reflection;
using EventSourcing.Runtime.Compilation;
using Xunit.Abstractions;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Probes of <see cref="DerivationPolicy"/>, generated as in <see cref="SameVerdictTests"/>: every allowed base class × every member
/// it lets a tenant override, and every allowed interface, compiled with the override's body in each of the places the compiler
/// turns into generated code (plain, lambda, capturing lambda, static and capturing local function, local iterator); every
/// refused base, interface and member refused with its message. A policy entry without a probe fails
/// <see cref="EveryDerivationEntryHasAProbe"/>; a virtual member a base class has but the policy does not list (a new .NET) fails
/// <see cref="EveryOverridableMemberOfAnAllowedBaseIsListed"/>.
/// </summary>
public class DerivationPolicyTests
{
    readonly ITestOutputHelper _output;
    public DerivationPolicyTests(ITestOutputHelper output) => _output = output;

    /// <summary>One probe: <paramref name="Declaration"/> declares a type named P (§ marks where a position's statement goes);
    /// <paramref name="Refused"/> is a substring of the expected refusal, or null when it must compile.</summary>
    public sealed record Probe(string Entry, string Declaration, string? Refused)
    {
        public override string ToString() => $"{Entry} [{Declaration}]";
    }

    static readonly (string Name, string Statement)[] Positions =
    {
        ("Plain", "_ = \"x\".Length;"),
        ("Lambda", "System.Func<int> ctxF = () => 1; _ = ctxF();"),
        ("CapturingLambda", "int ctxK = 2; System.Func<int> ctxF = () => ctxK; _ = ctxF();"),
        ("StaticLocalFunction", "_ = L(); static int L() => 1;"),
        ("CapturingLocalFunction", "int ctxK = 3; _ = L(); int L() => ctxK;"),
        ("Iterator", "foreach (var ctxI in It()) _ = ctxI; static System.Collections.Generic.IEnumerable<int> It() { yield return 1; }"),
    };

    const string Json = "System.Text.Json";
    const string R = "ref System.Text.Json.Utf8JsonReader r, System.Type t, System.Text.Json.JsonSerializerOptions o";
    const string W = "System.Text.Json.Utf8JsonWriter w, int v, System.Text.Json.JsonSerializerOptions o";

    /// <summary>Per allowed base: the class header and the members it must declare (abstract ones), by member name; the probed member's
    /// declaration replaces its entry (or is added).</summary>
    static readonly Dictionary<string, (string Header, Dictionary<string, string> Required)> Skeletons = new()
    {
        ["System.Object"] = ("public sealed class P", new()),
        ["System.ValueType"] = ("public struct P", new()),
        ["System.Attribute"] = ("public sealed class P : System.Attribute", new()),
        ["System.Exception"] = ("public sealed class P : System.Exception", new()),
        ["System.Text.Json.Serialization.JsonConverter`1"] = ("public sealed class P : System.Text.Json.Serialization.JsonConverter<int>", new()
        {
            ["Read"] = $"public override int Read({R}) => 0;",
            ["Write"] = $"public override void Write({W}) {{ }}",
        }),
        ["System.Text.Json.Serialization.JsonConverterFactory"] = ("public sealed class P : System.Text.Json.Serialization.JsonConverterFactory", new()
        {
            ["CanConvert"] = "public override bool CanConvert(System.Type t) => false;",
            ["CreateConverter"] = "public override System.Text.Json.Serialization.JsonConverter? CreateConverter(System.Type t, System.Text.Json.JsonSerializerOptions o) => null;",
        }),
        ["System.Text.Json.JsonNamingPolicy"] = ("public sealed class P : System.Text.Json.JsonNamingPolicy", new() { ["ConvertName"] = "public override string ConvertName(string n) => n;" }),
        ["System.Collections.Generic.Comparer`1"] = ("public sealed class P : System.Collections.Generic.Comparer<int>", new() { ["Compare"] = "public override int Compare(int a, int b) => 0;" }),
        ["System.Collections.Generic.EqualityComparer`1"] = ("public sealed class P : System.Collections.Generic.EqualityComparer<int>", new()
        {
            ["Equals"] = "public override bool Equals(int a, int b) => a == b;",
            ["GetHashCode"] = "public override int GetHashCode(int a) => a;",
        }),
        ["System.StringComparer"] = ("public sealed class P : System.StringComparer", new()
        {
            ["Compare"] = "public override int Compare(string? a, string? b) => 0;",
            ["Equals"] = "public override bool Equals(string? a, string? b) => a == b;",
            ["GetHashCode"] = "public override int GetHashCode(string a) => 0;",
        }),
    };

    /// <summary>The declaration overriding a member, with § in its body (base-specific first, then by member name).</summary>
    static string Override(string type, string member) => (type, member) switch
    {
        ("System.Collections.Generic.Comparer`1" or "System.StringComparer", "Compare") => Skeletons[type].Required[member].Replace("=> 0;", "{ § return 0; }"),
        ("System.Collections.Generic.EqualityComparer`1" or "System.StringComparer", "Equals" or "GetHashCode") =>
            Skeletons[type].Required[member].Replace("=> a == b;", "{ § return a == b; }").Replace("=> a;", "{ § return a; }").Replace("=> 0;", "{ § return 0; }"),
        (_, "Read") => $"public override int Read({R}) {{ § return 0; }}",
        (_, "Write") => $"public override void Write({W}) {{ § }}",
        (_, "ReadAsPropertyName") => $"public override int ReadAsPropertyName({R}) {{ § return 0; }}",
        (_, "WriteAsPropertyName") => $"public override void WriteAsPropertyName({W}) {{ § }}",
        (_, "CanConvert") => "public override bool CanConvert(System.Type t) { § return false; }",
        (_, "get_HandleNull") => "public override bool HandleNull { get { § return false; } }",
        (_, "CreateConverter") => "public override System.Text.Json.Serialization.JsonConverter? CreateConverter(System.Type t, System.Text.Json.JsonSerializerOptions o) { § return null; }",
        (_, "ConvertName") => "public override string ConvertName(string n) { § return n; }",
        (_, "ToString") => "public override string ToString() { § return \"\"; }",
        (_, "Equals") => "public override bool Equals(object? other) { § return false; }",
        (_, "GetHashCode") => "public override int GetHashCode() { § return 0; }",
        (_, "get_Message") => "public override string Message { get { § return \"\"; } }",
        (_, "Finalize") => "~P() { § }",
        (_, "get_Data") => "public override System.Collections.IDictionary Data { get { § return null!; } }",
        (_, "get_HelpLink") => "public override string? HelpLink { get { § return null; } }",
        (_, "set_HelpLink") => "public override string? HelpLink { set { § } }",
        (_, "get_Source") => "public override string? Source { get { § return null; } }",
        (_, "set_Source") => "public override string? Source { set { § } }",
        (_, "get_StackTrace") => "public override string? StackTrace { get { § return null; } }",
        (_, "GetBaseException") => "public override System.Exception GetBaseException() { § return this; }",
        (_, "GetObjectData") => "[System.Obsolete] public override void GetObjectData(System.Runtime.Serialization.SerializationInfo i, System.Runtime.Serialization.StreamingContext c) { § }",
        (_, "get_TypeId") => "public override object TypeId { get { § return 1; } }",
        (_, "Match") => "public override bool Match(object? o) { § return false; }",
        (_, "IsDefaultAttribute") => "public override bool IsDefaultAttribute() { § return false; }",
        _ => throw new InvalidOperationException($"no override template for {type}::{member}"),
    };

    static string Declare(string type, string member)
    {
        var (header, required) = Skeletons[type];
        var members = required.Where(kv => kv.Key != member).Select(kv => kv.Value).Append(Override(type, member));
        return $"{header}\n{{\n    {string.Join("\n    ", members)}\n}}";
    }

    /// <summary>Implementations of the allowed interfaces, § in the member whose caller the entry justifies.</summary>
    static readonly Dictionary<string, string> Implementations = new()
    {
        ["System.IEquatable`1"] = "public sealed class P : System.IEquatable<P> { public bool Equals(P? o) { § return false; } }",
        ["System.IComparable"] = "public sealed class P : System.IComparable { public int CompareTo(object? o) { § return 0; } }",
        ["System.IComparable`1"] = "public sealed class P : System.IComparable<P> { public int CompareTo(P? o) { § return 0; } }",
        ["System.Collections.Generic.IComparer`1"] = "public sealed class P : System.Collections.Generic.IComparer<int> { int System.Collections.Generic.IComparer<int>.Compare(int a, int b) { § return 0; } }",
        ["System.Collections.IComparer"] = "public sealed class P : System.Collections.IComparer { public int Compare(object? a, object? b) { § return 0; } }",
        ["System.Collections.Generic.IEqualityComparer`1"] = "public sealed class P : System.Collections.Generic.IEqualityComparer<int> { public bool Equals(int a, int b) { § return true; } public int GetHashCode(int a) => a; }",
        ["System.Collections.IEqualityComparer"] = "public sealed class P : System.Collections.IEqualityComparer { public new bool Equals(object? a, object? b) { § return true; } public int GetHashCode(object a) => 0; }",
        ["System.Collections.IEnumerable"] = "public sealed class P : System.Collections.IEnumerable { public System.Collections.IEnumerator GetEnumerator() { § return new int[0].GetEnumerator(); } }",
        ["System.Collections.Generic.IEnumerable`1"] = "public sealed class P : System.Collections.Generic.IEnumerable<int> { public System.Collections.Generic.IEnumerator<int> GetEnumerator() { § yield return 1; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator(); }",
        ["System.Collections.IEnumerator"] = "public sealed class P : System.Collections.IEnumerator { public bool MoveNext() { § return false; } public object Current => 0; public void Reset() { } }",
        ["System.Collections.Generic.IEnumerator`1"] = "public sealed class P : System.Collections.Generic.IEnumerator<int> { public bool MoveNext() { § return false; } public int Current => 0; object System.Collections.IEnumerator.Current => 0; public void Reset() { } public void Dispose() { } }",
        ["System.IDisposable"] = "public sealed class P : System.IDisposable { public void Dispose() { § } }",
        ["System.IFormattable"] = "public sealed class P : System.IFormattable { public string ToString(string? f, System.IFormatProvider? p) { § return \"\"; } }",
        ["System.Collections.Generic.IReadOnlyCollection`1"] = "public sealed class P : System.Collections.Generic.IReadOnlyCollection<int> { public int Count { get { § return 0; } } public System.Collections.Generic.IEnumerator<int> GetEnumerator() { yield break; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator(); }",
        ["System.Collections.Generic.IReadOnlyList`1"] = "public sealed class P : System.Collections.Generic.IReadOnlyList<int> { public int this[int i] { get { § return i; } } public int Count => 0; public System.Collections.Generic.IEnumerator<int> GetEnumerator() { yield break; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator(); }",
        ["System.Collections.Generic.IReadOnlyDictionary`2"] = "public sealed class P : System.Collections.Generic.IReadOnlyDictionary<int, int> { public bool TryGetValue(int k, out int v) { § v = 0; return false; } public bool ContainsKey(int k) => false; public int this[int k] => 0; public System.Collections.Generic.IEnumerable<int> Keys => new int[0]; public System.Collections.Generic.IEnumerable<int> Values => new int[0]; public int Count => 0; public System.Collections.Generic.IEnumerator<System.Collections.Generic.KeyValuePair<int, int>> GetEnumerator() { yield break; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator(); }",
        ["System.Collections.Generic.ICollection`1"] = "public sealed class P : System.Collections.Generic.ICollection<int> { readonly System.Collections.Generic.List<int> _items = new(); public int Count { get { § return _items.Count; } } public bool IsReadOnly => true; public void Add(int x) { } public void Clear() { } public bool Contains(int x) => false; public void CopyTo(int[] a, int i) => _items.CopyTo(a, i); public bool Remove(int x) => false; " + Enumerable + " }",
        ["System.Collections.ICollection"] = "public sealed class P : System.Collections.ICollection { readonly int[] _items = new int[1]; public int Count { get { § return 1; } } public bool IsSynchronized => false; public object SyncRoot => this; public void CopyTo(System.Array a, int i) => _items.CopyTo(a, i); public System.Collections.IEnumerator GetEnumerator() => _items.GetEnumerator(); }",
        ["System.Collections.Generic.IList`1"] = "public sealed class P : System.Collections.Generic.IList<int> { readonly int _item = 1; public int this[int i] { get { § return _item; } set { } } public int IndexOf(int x) => 0; public void Insert(int i, int x) { } public void RemoveAt(int i) { } public int Count => 1; public bool IsReadOnly => true; public void Add(int x) { } public void Clear() { } public bool Contains(int x) => false; public void CopyTo(int[] a, int i) { a[i] = _item; } public bool Remove(int x) => false; public System.Collections.Generic.IEnumerator<int> GetEnumerator() { yield return _item; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator(); }",
        ["System.Collections.IList"] = "public sealed class P : System.Collections.IList { readonly object _item = 1; public object? this[int i] { get { § return _item; } set { } } public int Add(object? x) => 0; public void Clear() { } public bool Contains(object? x) => false; public int IndexOf(object? x) => 0; public void Insert(int i, object? x) { } public void Remove(object? x) { } public void RemoveAt(int i) { } public bool IsFixedSize => true; public bool IsReadOnly => true; public int Count => 1; public bool IsSynchronized => false; public object SyncRoot => this; public void CopyTo(System.Array a, int i) { a.SetValue(_item, i); } public System.Collections.IEnumerator GetEnumerator() { yield return _item; } }",
        ["System.ICloneable"] = "public sealed class P : System.ICloneable { public object Clone() { § return this; } }",
        ["System.IParsable`1"] = "public sealed class P : System.IParsable<P> { public static P Parse(string s, System.IFormatProvider? p) { § return new P(); } public static bool TryParse(string? s, System.IFormatProvider? p, out P r) { r = new P(); return true; } }",
        ["System.Runtime.CompilerServices.ITuple"] = "public sealed class P : System.Runtime.CompilerServices.ITuple { public int Length => 1; public object? this[int i] { get { § return null; } } }",
    };

    const string Enumerable = "public System.Collections.Generic.IEnumerator<int> GetEnumerator() => _items.GetEnumerator(); System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();";

    /// <summary>A declaration deriving from or implementing each refused framework type.</summary>
    static readonly Dictionary<string, string> RefusedDeclarations = new()
    {
        ["System.Text.Decoder"] = "public abstract class P : System.Text.Decoder { }",
        ["System.Text.Encoder"] = "public abstract class P : System.Text.Encoder { }",
        ["System.Text.Encoding"] = "public abstract class P : System.Text.Encoding { }",
        ["System.Text.DecoderFallback"] = "public abstract class P : System.Text.DecoderFallback { }",
        ["System.Text.EncoderFallback"] = "public abstract class P : System.Text.EncoderFallback { }",
        ["System.Text.DecoderFallbackBuffer"] = "public abstract class P : System.Text.DecoderFallbackBuffer { }",
        ["System.Text.EncoderFallbackBuffer"] = "public abstract class P : System.Text.EncoderFallbackBuffer { }",
        ["System.Text.Encodings.Web.TextEncoder"] = "public abstract class P : System.Text.Encodings.Web.TextEncoder { }",
        ["System.Text.Encodings.Web.JavaScriptEncoder"] = "public abstract class P : System.Text.Encodings.Web.JavaScriptEncoder { }",
        ["System.IO.Stream"] = "public abstract class P : System.IO.Stream { }",
        ["System.IO.TextReader"] = "public abstract class P : System.IO.TextReader { }",
        ["System.IO.TextWriter"] = "public abstract class P : System.IO.TextWriter { }",
        ["System.Security.Cryptography.HashAlgorithm"] = "public abstract class P : System.Security.Cryptography.HashAlgorithm { }", // not even referenced (CS0234)
        ["System.Buffers.IBufferWriter`1"] = "public interface P : System.Buffers.IBufferWriter<byte> { }",
        ["System.Buffers.MemoryManager`1"] = "public abstract class P : System.Buffers.MemoryManager<byte> { }",
        ["System.Buffers.ReadOnlySequenceSegment`1"] = "public sealed class P : System.Buffers.ReadOnlySequenceSegment<byte> { }",
        ["System.ISpanFormattable"] = "public interface P : System.ISpanFormattable { }",
        ["System.IUtf8SpanFormattable"] = "public interface P : System.IUtf8SpanFormattable { }",
        ["System.ISpanParsable`1"] = "public interface P<T> : System.ISpanParsable<T> where T : System.ISpanParsable<T> { }",
        ["System.IUtf8SpanParsable`1"] = "public interface P<T> : System.IUtf8SpanParsable<T> where T : System.IUtf8SpanParsable<T> { }",
        ["System.Collections.Generic.IDictionary`2"] = "public interface P : System.Collections.Generic.IDictionary<int, int> { }",
        ["System.Collections.IDictionary"] = "public interface P : System.Collections.IDictionary { }",
        ["System.Collections.Generic.ISet`1"] = "public interface P : System.Collections.Generic.ISet<int> { }",
        ["System.Collections.Generic.IAlternateEqualityComparer`2"] = "public interface P : System.Collections.Generic.IAlternateEqualityComparer<System.ReadOnlySpan<char>, string> { }",
        ["System.Collections.ObjectModel.Collection`1"] = "public sealed class P : System.Collections.ObjectModel.Collection<int> { }",
        ["System.Collections.ObjectModel.ReadOnlyCollection`1"] = "public sealed class P : System.Collections.ObjectModel.ReadOnlyCollection<int> { public P() : base(new int[0]) { } }",
        ["System.Collections.ObjectModel.KeyedCollection`2"] = "public abstract class P : System.Collections.ObjectModel.KeyedCollection<int, int> { }",
        ["System.Collections.Generic.List`1"] = "public sealed class P : System.Collections.Generic.List<int> { }",
        ["System.Collections.Generic.Dictionary`2"] = "public sealed class P : System.Collections.Generic.Dictionary<int, int> { }",
        ["System.Runtime.CompilerServices.IAsyncStateMachine"] = "public interface P : System.Runtime.CompilerServices.IAsyncStateMachine { }",
        ["System.Numerics.INumberBase`1"] = "public interface P<T> : System.Numerics.INumberBase<T> where T : System.Numerics.INumberBase<T> { }",
    };

    public static readonly Probe[] Probes = BuildProbes();

    static Probe[] BuildProbes()
    {
        var p = new List<Probe>();
        foreach (var b in DerivationPolicy.Bases.Values)
        {
            switch (b.Type)
            {
                case "System.Enum":
                    p.Add(new("base:System.Enum", "public enum P { A, B }", null));
                    foreach (var m in b.Refused.Keys) p.Add(new($"refused-override:System.Enum::{m}", "public class P : System.Enum { }", "CS0644"));
                    continue;
                case "System.MulticastDelegate":
                    // Allowed here; refused today by the API allowlist, for the System.IAsyncResult in the BeginInvoke Roslyn emits
                    // (a false refusal of its own, not this policy's: the probe flips when that is fixed).
                    p.Add(new("base:System.MulticastDelegate", "public delegate int P(int x);", "forbidden API: System.IAsyncResult"));
                    foreach (var m in b.Refused.Keys) p.Add(new($"refused-override:System.MulticastDelegate::{m}", "public class P : System.MulticastDelegate { }", "CS0644"));
                    continue;
            }
            if (GeneratedCodePolicy.GeneratorBases.ContainsKey(b.Type))
            {
                // Allowed in IL for the source generators' output only: written by hand, refused on the source (GeneratedCodePolicy).
                var declaration = b.Type.EndsWith("Context", StringComparison.Ordinal)
                    ? "public abstract class P : System.Text.Json.Serialization.JsonSerializerContext { protected P() : base(null) { } }"
                    : $"public abstract class P : {b.Type} {{ }}";
                var refused = $"derives from {DerivationPolicy.Display(b.Type)} (only ";
                p.Add(new("base:" + b.Type, declaration, refused));
                foreach (var m in b.Overridable.Keys) p.Add(new($"override:{b.Type}::{m}", declaration, refused));
                foreach (var m in b.Refused.Keys) p.Add(new($"refused-override:{b.Type}::{m}", declaration, refused));
                continue;
            }
            var (header, required) = Skeletons[b.Type];
            p.Add(new("base:" + b.Type, $"{header} {{ {string.Join(" ", required.Values)} }}", null));
            foreach (var m in b.Overridable.Keys) p.Add(new($"override:{b.Type}::{m}", Declare(b.Type, m), null));
            foreach (var m in b.Refused.Keys)
                p.Add(new($"refused-override:{b.Type}::{m}", Declare(b.Type, m), m == "Finalize" ? (b.Type == "System.ValueType" ? "CS0575" : "finalizer on Probes.P_") : $"overrides {DerivationPolicy.Display(b.Type)}.{m} ("));
        }
        // The family of framework exceptions the API allowlist allows: System.Exception's rule.
        p.Add(new("base:System.Exception", "public sealed class P : System.InvalidOperationException { public override string Message { get { § return \"\"; } } }", null));
        p.Add(new("base:System.Exception", "public sealed class P : System.Text.Json.JsonException { public override string Message { get { § return \"\"; } } }", null));
        p.Add(new("refused-override:System.Exception::get_StackTrace", "public sealed class P : System.ArgumentException { public override string? StackTrace { get { § return null; } } }", "overrides System.Exception.get_StackTrace"));
        // A member that only a framework exception subclass declares is refused as not listed.
        p.Add(new("refused-override:System.Exception::(not listed)", "public sealed class P : System.ArgumentException { public override string? ParamName { get { § return null; } } }", "overrides System.Exception.get_ParamName (not on the list of members"));

        foreach (var (i, impl) in Implementations) p.Add(new("interface:" + i, impl, null));
        p.Add(new("interface:System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver",
            "public sealed class P : System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver { public System.Text.Json.Serialization.Metadata.JsonTypeInfo? GetTypeInfo(System.Type t, System.Text.Json.JsonSerializerOptions o) { § return null; } }",
            "implements System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver (only "));
        foreach (var (t, decl) in RefusedDeclarations)
            p.Add(new("refused:" + t, decl, $"{(IsInterface(t) ? "implements" : "derives from")} {DerivationPolicy.Display(t)} ({DerivationPolicy.RefusedWithReason[t]}"
                                            + (t is "System.Security.Cryptography.HashAlgorithm" or "System.Collections.ObjectModel.KeyedCollection`2" ? "|error CS0234" : "")));

        // A collection's CopyTo is handed the framework's arrays: it may only write into them, in Roslyn's own shapes.
        const string Collection = "public int Count => 0; public bool IsReadOnly => true; public void Add(int x) { } public void Clear() { } public bool Contains(int x) => false; public bool Remove(int x) => false; public System.Collections.Generic.IEnumerator<int> GetEnumerator() { yield break; } System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();";
        p.Add(new("copyto:reads", $"public sealed class P : System.Collections.Generic.ICollection<int> {{ public int Seen; public void CopyTo(int[] a, int i) {{ § Seen = a[0]; }} {Collection} }}", "P_Plain.CopyTo reads or passes on the array it is given"));
        p.Add(new("copyto:reads", $"public sealed class P : System.Collections.Generic.ICollection<int> {{ public int[]? Kept; void System.Collections.Generic.ICollection<int>.CopyTo(int[] a, int i) {{ Kept = a; }} {Collection} }}", "CopyTo reads or passes on the array it is given"));
        p.Add(new("copyto:reads", $"public abstract class PBase : System.Collections.Generic.ICollection<int> {{ public abstract void CopyTo(int[] a, int i); {Collection} }}\npublic sealed class P : PBase {{ public string S = \"\"; public override void CopyTo(int[] a, int i) {{ § S = string.Join(\",\", a); }} }}", "P_Plain.CopyTo reads or passes on the array it is given"));
        p.Add(new("copyto:reads", $"public class PBase {{ public int Seen; public void CopyTo(int[] a, int i) {{ Seen = a[0]; }} }}\npublic sealed class P : PBase, System.Collections.Generic.ICollection<int> {{ {Collection} }}", "CopyTo reads or passes on the array it is given"));
        p.Add(new("copyto:write-only", "public sealed class P { public System.Collections.Generic.IEnumerable<int> M(int a) { § System.Collections.Generic.IEnumerable<int> x = [a, 2]; System.Collections.Generic.IReadOnlyList<int> y = [a]; System.Collections.Generic.IList<int> z = [..x]; return [..x, ..y, ..z]; } }", null));

        // Covariant returns: Roslyn emits a newslot method and an explicit override (MethodImpl) of the framework member.
        p.Add(new("covariant-return", "public sealed class P : System.Exception { public override System.InvalidOperationException GetBaseException() { § return new(); } }", "overrides System.Exception.GetBaseException (exceptions can outlive the call"));
        p.Add(new("covariant-return", "public sealed class P : System.Text.Json.Serialization.JsonConverterFactory { public override bool CanConvert(System.Type t) => false; public override System.Text.Json.Serialization.JsonConverter<int>? CreateConverter(System.Type t, System.Text.Json.JsonSerializerOptions o) { § return null; } }", null));
        // Generic tenant bases between the tenant type and the framework class.
        p.Add(new("tenant-generic-base", "public abstract class PBase<T> : System.Collections.Generic.Comparer<T> { }\npublic sealed class P : PBase<int> { public override int Compare(int a, int b) { § return 0; } }", null));
        p.Add(new("tenant-generic-base", "public abstract class PBase<T> : System.Exception { }\npublic sealed class P : PBase<int> { public override string? Source { get { § return null; } } }", "overrides System.Exception.get_Source ("));

        // Not on the list at all.
        p.Add(new("not-listed", "public sealed class P : System.Collections.Generic.HashSet<int> { }", "derives from System.Collections.Generic.HashSet<T> (" + DerivationPolicy.NotListed));
        p.Add(new("not-listed", "public sealed class P : System.Text.Json.Serialization.JsonSerializerContext { public P() : base(null) { } protected override System.Text.Json.JsonSerializerOptions? GeneratedSerializerOptions => null; public override System.Text.Json.Serialization.Metadata.JsonTypeInfo? GetTypeInfo(System.Type t) => null; }", "derives from System.Text.Json.Serialization.JsonSerializerContext"));
        // The tenant's own virtuals are the tenant's: free to override, through records and its own hierarchies.
        p.Add(new("tenant-virtual", "public abstract class PBase { public virtual int Go(int x) => x; public abstract string Name { get; } }\npublic sealed class P : PBase { public override int Go(int x) { § return 1; } public override string Name => \"p\"; }", null));
        p.Add(new("tenant-virtual", "public record PBase(int A);\npublic sealed record P(int A, int B) : PBase(A) { public override string ToString() { § return \"\"; } }", null));
        // A tenant "new virtual" with the name of a refused framework member does not make the framework one overridable.
        p.Add(new("tenant-virtual", "public class PBase : System.Exception { public new virtual string? StackTrace => null; }\npublic sealed class P : PBase { public override string? StackTrace { get { § return \"x\"; } } }", "overrides System.Exception.get_StackTrace"));
        return p.ToArray();
    }

    static bool IsInterface(string metadataName) => metadataName.Split('.').Last() is var n && n.Length > 1 && n[0] == 'I' && char.IsUpper(n[1]);

    public static TheoryData<string, bool> Cases()
    {
        var data = new TheoryData<string, bool>();
        foreach (var coreLib in new[] { false, true })
        foreach (var probe in Probes)
            data.Add(probe.ToString(), coreLib);
        return data;
    }

    /// <summary>Compiled once for all cases, against both reference sets the host can use (the reference pack; the runtime's own
    /// assemblies, where System.Private.CoreLib exposes everything).</summary>
    static readonly Lazy<IReadOnlyDictionary<(string, bool), (CompileResult Result, string Source)>> Results = new(() =>
    {
        var compilers = new Dictionary<bool, TenantCompiler>
        {
            [false] = new TenantCompiler(ReferenceSet.References),
            [true] = new TenantCompiler(ReferenceSet.LoadFrom(ReferenceSet.RuntimeDirectory, implementation: true)),
        };
        var results = new ConcurrentDictionary<(string, bool), (CompileResult, string)>();
        var work = Probes.SelectMany(p => new[] { (p, false), (p, true) });
        Parallel.ForEach(work, new ParallelOptions { MaxDegreeOfParallelism = Math.Max(2, Environment.ProcessorCount) }, item =>
        {
            var (probe, coreLib) = item;
            var source = Source(probe);
            results[(probe.ToString(), coreLib)] = (compilers[coreLib].Compile(new[] { new SourceFile("Probe.cs", source) }, ImplementationKind.Reducer), source);
        });
        return results;
    });

    /// <summary>One type per position (P_Plain, P_Lambda…), each the probe's declaration with that position's statement at §.</summary>
    static string Source(Probe probe)
    {
        var text = new System.Text.StringBuilder("#pragma warning disable CS8321, CS0219, CS0618, CS0659, CS0661, CS0660, CS0114, CS0108, CS8765, CS8767\nnamespace Probes;\n");
        var positions = probe.Declaration.Contains('§') ? Positions : Positions.Take(1);
        foreach (var (name, statement) in positions)
        {
            var declaration = System.Text.RegularExpressions.Regex.Replace(probe.Declaration, @"\bP(Base)?\b", m => m.Value + "_" + name);
            text.Append(declaration.Replace("§", statement)).Append('\n');
        }
        text.Append("public sealed class ProbeReducer : EventSourcing.IReducer<int> { public int Apply(int s, EventSourcing.Event e) => s; }\n");
        return text.ToString();
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void EachEntryGetsItsVerdictInEveryPosition(string probeName, bool coreLib)
    {
        var probe = Probes.Single(p => p.ToString() == probeName);
        var (result, source) = Results.Value[(probeName, coreLib)];
        var text = result.ErrorText;
        if (probe.Refused is null)
        {
            Assert.True(result.Ok, $"{probe.Entry} ({(coreLib ? "System.Private.CoreLib" : "reference pack")}): expected to compile, got:\n{text}\n--- source ---\n{source}");
            return;
        }
        Assert.False(result.Ok, $"{probe.Entry}: expected a refusal naming \"{probe.Refused}\", but it compiled\n--- source ---\n{source}");
        // "a|b": either (a type the reference pack lacks is refused by the compiler, CS0234, before it reaches the IL check).
        Assert.True(probe.Refused.Split('|').Any(r => text.Contains(r, StringComparison.Ordinal)), $"{probe.Entry} ({(coreLib ? "System.Private.CoreLib" : "reference pack")}): expected \"{probe.Refused}\" in:\n{text}\n--- source ---\n{source}");
        // Ours come with a file and line, at every position.
        foreach (var line in result.Errors.Where(e => e.Id == "ES0002" && (e.Message.Contains("derives from") || e.Message.Contains("implements") || e.Message.Contains(" overrides "))))
            Assert.True(line.Path == "Probe.cs" && line.Line > 0, $"{probe.Entry}: no location: {line}");
    }

    [Fact]
    public void EveryDerivationEntryHasAProbe()
    {
        var probed = Probes.Select(p => p.Entry).ToHashSet(StringComparer.Ordinal);
        var missing = DerivationPolicy.Entries().Where(e => !probed.Contains(e)).ToList();
        Assert.True(missing.Count == 0, "derivation policy entries without a probe in DerivationPolicyTests:\n" + string.Join("\n", missing));
    }

    /// <summary>Allowed + refused members of each allowed base are exactly its overridable members, by reflection on the runtime's own types.</summary>
    [Fact]
    public void EveryOverridableMemberOfAnAllowedBaseIsListed()
    {
        var problems = new List<string>();
        foreach (var b in DerivationPolicy.Bases.Values)
        {
            var type = ResolveFramework(b.Type);
            var actual = Overridable(type);
            var listed = b.Overridable.Keys.Concat(b.Refused.Keys).ToHashSet(StringComparer.Ordinal);
            foreach (var m in actual.Except(listed)) problems.Add($"{b.Type}: overridable {m} is neither allowed nor refused");
            foreach (var m in listed.Except(actual)) problems.Add($"{b.Type}: lists {m}, which it does not have");
            // Every overload of an allowed name: no buffer is handed in.
            // The generators' bases: only generated code overrides them (RegexRunner.Scan gets the tenant's own input text).
            if (GeneratedCodePolicy.GeneratorBases.ContainsKey(b.Type)) continue;
            foreach (var method in OverridableMethods(type).Where(m => b.Overridable.ContainsKey(m.Name)))
            foreach (var parameter in method.GetParameters())
                if (IsBuffer(parameter.ParameterType)) problems.Add($"{b.Type}.{method.Name} takes a buffer ({parameter.ParameterType.Name} {parameter.Name})");
        }
        // The exception family: every public exception type the API allowlist allows may be derived from with System.Exception's
        // rule; whatever it adds beyond System.Exception's members is refused as not listed.
        var exceptionRule = DerivationPolicy.Bases["System.Exception"];
        foreach (var t in typeof(object).Assembly.GetExportedTypes().Where(t => t.IsClass && !t.IsSealed && typeof(Exception).IsAssignableFrom(t) && t.Namespace == "System"))
        foreach (var method in OverridableMethods(t).Where(m => exceptionRule.Overridable.ContainsKey(m.Name)))
        foreach (var parameter in method.GetParameters())
            if (IsBuffer(parameter.ParameterType)) problems.Add($"{t}.{method.Name} takes a buffer");
        Assert.True(problems.Count == 0, string.Join("\n", problems));
    }

    static bool IsBuffer(Type t) => t.IsArray || t.IsPointer || t.IsByRefLike && t != typeof(System.Text.Json.Utf8JsonReader) || t.IsByRef && IsBuffer(t.GetElementType()!)
                                     || t.IsGenericType && t.GetGenericTypeDefinition() is var g && (g == typeof(Memory<>) || g == typeof(ReadOnlyMemory<>) || g == typeof(ArraySegment<>));

    static Type ResolveFramework(string metadataName) => metadataName switch
    {
        "System.Text.Json.Serialization.JsonConverter`1" => typeof(System.Text.Json.Serialization.JsonConverter<>),
        "System.Text.Json.Serialization.JsonConverterFactory" => typeof(System.Text.Json.Serialization.JsonConverterFactory),
        "System.Text.Json.JsonNamingPolicy" => typeof(System.Text.Json.JsonNamingPolicy),
        "System.Text.Json.Serialization.JsonSerializerContext" => typeof(System.Text.Json.Serialization.JsonSerializerContext),
        "System.Text.RegularExpressions.Regex" => typeof(System.Text.RegularExpressions.Regex),
        "System.Text.RegularExpressions.RegexRunner" => typeof(System.Text.RegularExpressions.RegexRunner),
        "System.Text.RegularExpressions.RegexRunnerFactory" => typeof(System.Text.RegularExpressions.RegexRunnerFactory),
        _ => typeof(object).Assembly.GetType(metadataName, throwOnError: true)!,
    };

    static IEnumerable<MethodInfo> OverridableMethods(Type type)
    {
        for (var t = type; t is not null; t = t.BaseType)
        foreach (var m in t.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            if (m.IsVirtual && !m.IsFinal && (m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly))
                yield return m;
    }

    /// <summary>Names C# code outside the framework can override on <paramref name="type"/>: virtual, not sealed along the chain.</summary>
    static HashSet<string> Overridable(Type type)
    {
        var sealedNames = new HashSet<string>(StringComparer.Ordinal);
        var result = new HashSet<string>(StringComparer.Ordinal);
        for (var t = type; t is not null; t = t.BaseType)
        foreach (var m in t.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
        {
            if (!m.IsVirtual || !(m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly)) continue;
            var key = m.GetBaseDefinition().ToString()!;
            if (m.IsFinal) sealedNames.Add(key);
            else if (!sealedNames.Contains(key)) result.Add(m.Name);
        }
        return result;
    }

    [Fact]
    public void MatrixSize() =>
        _output.WriteLine($"derivation probes: {Probes.Length} probes, {Probes.Count(p => p.Declaration.Contains('§'))} of them in {Positions.Length} positions, {Results.Value.Count} compiles");
}
