namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The allowlist of what tenant types may derive from, implement and override (issue 22). The framework calls virtual members
/// of tenant types, and some of those calls hand the tenant a buffer the framework owns: an array rented from a process-wide
/// ArrayPool (Decoder.GetChars under EncodingExtensions.GetString, ISpanFormattable.TryFormat under string interpolation,
/// JavaScriptEncoder.EncodeUtf8 under Utf8JsonWriter…) whose old contents are another tenant's or the host's data. Which
/// framework method does that is not something anyone can list, so the list is the other way round: the framework classes and
/// interfaces a tenant type may derive from or implement, and for each class the members it may override, each justified by who
/// calls it with what. Everything else is refused at compile time (ES0002) and again at load. The tenant's own types and the
/// SDK's (EventSourcing.*) are not framework types: deriving from them is free; a tenant virtual may be overridden freely.
/// </summary>
public static class DerivationPolicy
{
    const string Values = "the framework calls it with the tenant's own values (or none) and only reads its result";
    const string NotNeeded = "not needed by reducers and projections; kept off the list so that no framework caller of it has to be trusted";
    const string Finalizer = "finalizers run on the GC's thread outside any call (refused as finalizers)";
    const string OutlivesCall = "exceptions can outlive the call; the host does not need it overridden";

    /// <summary>System.Object's virtuals, shared by every class below.</summary>
    static readonly Dictionary<string, string> ObjectMembers = new(StringComparer.Ordinal)
    {
        ["ToString"] = "string conversion and interpolation call it with no argument and copy the string it returns",
        ["Equals"] = "collections and comparers call it with the tenant's own values",
        ["GetHashCode"] = "collections call it on the tenant's own values",
    };

    static readonly Dictionary<string, string> ObjectRefused = new(StringComparer.Ordinal) { ["Finalize"] = Finalizer };

    static DerivableBase Base(string type, string why, Dictionary<string, string> extra, Dictionary<string, string>? refused = null)
    {
        var allowed = new Dictionary<string, string>(ObjectMembers, StringComparer.Ordinal);
        foreach (var (k, v) in extra) allowed[k] = v;
        var no = new Dictionary<string, string>(ObjectRefused, StringComparer.Ordinal);
        foreach (var (k, v) in refused ?? new()) no[k] = v;
        return new DerivableBase(type, why, allowed, no);
    }

    static readonly Dictionary<string, string> ExceptionRefused = new(StringComparer.Ordinal)
    {
        ["get_Data"] = OutlivesCall, ["get_HelpLink"] = OutlivesCall, ["set_HelpLink"] = OutlivesCall, ["get_Source"] = OutlivesCall,
        ["set_Source"] = OutlivesCall, ["get_StackTrace"] = OutlivesCall, ["GetBaseException"] = OutlivesCall,
        ["GetObjectData"] = "binary serialization is not allowed",
    };

    static readonly Dictionary<string, string> ExceptionAllowed = new(StringComparer.Ordinal)
    {
        ["get_Message"] = "the host reads it (no argument) to report a failed call, and copies the string",
    };

    /// <summary>The classes, by metadata name.</summary>
    public static readonly IReadOnlyDictionary<string, DerivableBase> Bases = new[]
    {
        Base("System.Object", "every class; only ToString/Equals/GetHashCode may be overridden", new()),
        Base("System.ValueType", "every struct (record structs, tuples of the tenant's own)", new()),
        new DerivableBase("System.Enum", "every enum; C# cannot override its members", new Dictionary<string, string>(), new Dictionary<string, string>(ObjectMembers) { ["Finalize"] = Finalizer }),
        new DerivableBase("System.MulticastDelegate", "every delegate type; the runtime implements its members, C# cannot override them",
            new Dictionary<string, string>(), new Dictionary<string, string>(StringComparer.Ordinal)
            {
                // Equals, GetHashCode, GetInvocationList, CombineImpl, RemoveImpl are sealed.
                ["ToString"] = NotNeeded, ["Finalize"] = Finalizer, ["GetMethodImpl"] = NotNeeded, ["DynamicInvokeImpl"] = NotNeeded,
                ["GetObjectData"] = "binary serialization is not allowed", ["Clone"] = NotNeeded,
            }),
        Base("System.Attribute", "custom attributes: the tenant's own metadata, read by no framework code with a buffer", new(),
            new() { ["get_TypeId"] = NotNeeded, ["Match"] = NotNeeded, ["IsDefaultAttribute"] = NotNeeded }),
        Base(ExceptionKey, "custom exceptions; also every other framework exception type the API allowlist allows (ArgumentException, InvalidOperationException…)",
            ExceptionAllowed, ExceptionRefused),
        Base("System.Text.Json.Serialization.JsonConverter`1",
            "custom JSON conversion. Read gets a Utf8JsonReader over exactly the value being read (Event.Data/DataAs, the state: a slice of its own request's JSON; JsonSerializer.Deserialize(string): its own transcoded text) and cannot see the buffer beyond it; Write gets a Utf8JsonWriter, which has no API to read what is in its buffer",
            new()
            {
                ["Read"] = "the serializer, with a reader over exactly the JSON value being deserialized (the tenant's own event or state)",
                ["Write"] = "the serializer, with the tenant's own value and a writer that cannot be read back",
                ["ReadAsPropertyName"] = "the serializer, with a reader over exactly the tenant's own property name",
                ["WriteAsPropertyName"] = "the serializer, with the tenant's own key and a writer that cannot be read back",
                ["CanConvert"] = "the serializer, with a Type",
                ["get_HandleNull"] = "the serializer, no argument",
            }),
        Base("System.Text.Json.Serialization.JsonConverterFactory", "creates converters (checked alike)",
            new()
            {
                ["CanConvert"] = "the serializer, with a Type",
                ["CreateConverter"] = "the serializer, with a Type and the options; returns a converter",
            }),
        Base("System.Text.Json.JsonNamingPolicy", "property naming", new() { ["ConvertName"] = "the serializer, with a property name (a string) once per property" }),
        Base("System.Collections.Generic.Comparer`1", "custom ordering",
            new() { ["Compare"] = "sorting (List.Sort, Array.Sort, OrderBy, SortedSet…) with two elements of the tenant's own sequence; sorts never read outside the sorted range" }),
        Base("System.Collections.Generic.EqualityComparer`1", "custom equality for dictionaries and sets",
            new()
            {
                ["Equals"] = "collections and LINQ, with the tenant's own keys (Equals(object) too)",
                ["GetHashCode"] = "collections and LINQ, with the tenant's own keys",
            }),
        Base("System.StringComparer", "custom string comparison (not its span overloads: a StringComparer subclass gets no IAlternateEqualityComparer)",
            new()
            {
                ["Compare"] = "sorting and sorted collections, with two of the tenant's own strings",
                ["Equals"] = "collections, with the tenant's own strings",
                ["GetHashCode"] = "collections, with the tenant's own strings",
            }),
        // Only the source generators' output may derive from these (GeneratedCodePolicy refuses hand-written ones on every compile).
        Base("System.Text.RegularExpressions.Regex", "[GeneratedRegex]'s Regex subclass: its constructor sets the pattern, options, timeout and its runner factory", new()),
        Base("System.Text.RegularExpressions.RegexRunnerFactory", "[GeneratedRegex]'s runner factory",
            new() { ["CreateInstance"] = "the Regex, with no argument, when it has no idle runner" }),
        Base("System.Text.RegularExpressions.RegexRunner", "[GeneratedRegex]'s runner: generated matching code",
            new()
            {
                ["Scan"] = "the Regex, with the tenant's own input text (the runner's backtracking arrays are its own)",
                ["FindFirstChar"] = "never by the generated runner's Regex (Scan is overridden)", ["Go"] = "never by the generated runner's Regex (Scan is overridden)",
                ["InitTrackCount"] = "never by the generated runner's Regex (Scan is overridden)",
            }),
        Base("System.Text.Json.Serialization.JsonSerializerContext", "the System.Text.Json generator's context: read-only options and metadata for the tenant's types",
            new()
            {
                ["GetTypeInfo"] = "the serializer, with a Type; returns generated metadata",
                ["get_GeneratedSerializerOptions"] = "the serializer, no argument; the options the generator wrote ([JsonSourceGenerationOptions])",
            }),
    }.ToDictionary(b => b.Type, StringComparer.Ordinal);

    const string ExceptionKey = "System.Exception";

    /// <summary>Interfaces tenant types may implement (every member), by metadata name → who calls them with what.</summary>
    public static readonly IReadOnlyDictionary<string, string> Interfaces = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["System.IEquatable`1"] = "Equals(T): collections, LINQ and records, with the tenant's own values",
        ["System.IComparable"] = "CompareTo(object): sorting, with the tenant's own values",
        ["System.IComparable`1"] = "CompareTo(T): sorting, with another element of the tenant's own sequence",
        ["System.Collections.Generic.IComparer`1"] = "Compare(T, T): sorting, with two elements of the tenant's own sequence",
        ["System.Collections.IComparer"] = "Compare(object, object): sorting, with two of the tenant's own values",
        ["System.Collections.Generic.IEqualityComparer`1"] = "Equals/GetHashCode: collections and LINQ, with the tenant's own keys",
        ["System.Collections.IEqualityComparer"] = "Equals/GetHashCode: collections, with the tenant's own keys",
        ["System.Collections.IEnumerable"] = "GetEnumerator(): no argument; framework consumers (string.Join, ToArray, Concat) rent buffers but only ever read Current into them",
        ["System.Collections.Generic.IEnumerable`1"] = "GetEnumerator(): no argument (iterators, foreach, LINQ)",
        ["System.Collections.IEnumerator"] = "MoveNext/Current/Reset: no argument; the consumer copies Current",
        ["System.Collections.Generic.IEnumerator`1"] = "MoveNext/Current: no argument; the consumer copies Current",
        ["System.IDisposable"] = "Dispose(): no argument (using, foreach)",
        ["System.IFormattable"] = "ToString(format, provider): interpolation and string.Format, with the format string; they copy the string it returns",
        ["System.Collections.Generic.IReadOnlyCollection`1"] = "Count: no argument",
        ["System.Collections.Generic.IReadOnlyList`1"] = "this[int]/Count: an index; returns the tenant's own element",
        ["System.Collections.Generic.IReadOnlyDictionary`2"] = "TryGetValue/ContainsKey/this[key]/Keys/Values: the tenant's own keys",
        ["System.ICloneable"] = "Clone(): no argument",
        // Roslyn implements these for collection expressions (IEnumerable<T> x = [a, b] builds a <>z__ReadOnlyArray<T>).
        ["System.Collections.Generic.ICollection`1"] = CollectionCopyTo,
        ["System.Collections.ICollection"] = CollectionCopyTo,
        ["System.Collections.Generic.IList`1"] = "this[int], IndexOf, Insert…: indexes and the tenant's own values; CopyTo as ICollection<T>",
        ["System.Collections.IList"] = "this[int], IndexOf, Insert…: indexes and the tenant's own values; CopyTo as ICollection",
        ["System.IParsable`1"] = "static Parse/TryParse(string, provider): an immutable string holding exactly the text",
        ["System.Runtime.CompilerServices.ITuple"] = "Length/this[int]: positional patterns, with an index",
        // Only a generated JsonSerializerContext may implement it (GeneratedCodePolicy).
        ["System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver"] = "GetTypeInfo(Type, options): the serializer, with a Type and the options; returns generated metadata",
    };

    /// <summary>Refusals with a reason of their own (everything else not listed gets <see cref="NotListed"/>): the attack surface of issue 22.</summary>
    public static readonly IReadOnlyDictionary<string, string> RefusedWithReason = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["System.Text.Decoder"] = "the framework calls GetChars with a span over a whole array rented from the process-wide ArrayPool (EncodingExtensions.GetString over a multi-segment sequence): an override that writes nothing returns the array's old contents, another tenant's strings",
        ["System.Text.Encoder"] = "the framework calls GetBytes/Convert with spans over rented, uncleared buffers",
        ["System.Text.Encoding"] = "the framework calls GetChars/GetBytes and GetDecoder/GetEncoder with rented, uncleared buffers",
        ["System.Text.DecoderFallback"] = "decoder fallbacks are handed the framework's buffers while it decodes",
        ["System.Text.EncoderFallback"] = "encoder fallbacks are handed the framework's buffers while it encodes",
        ["System.Text.DecoderFallbackBuffer"] = "decoder fallbacks are handed the framework's buffers while it decodes",
        ["System.Text.EncoderFallbackBuffer"] = "encoder fallbacks are handed the framework's buffers while it encodes",
        ["System.Text.Encodings.Web.TextEncoder"] = "Utf8JsonWriter and the web encoders call EncodeUtf8/Encode with destination buffers rented from the shared pool",
        ["System.Text.Encodings.Web.JavaScriptEncoder"] = "Utf8JsonWriter calls EncodeUtf8 with destination buffers rented from the shared pool",
        ["System.IO.Stream"] = "Stream consumers (StreamReader, CopyTo, JSON) call Read/Write with rented buffers",
        ["System.IO.TextReader"] = "TextReader consumers call Read(Span<char>) with rented buffers",
        ["System.IO.TextWriter"] = "the framework calls Write(ReadOnlySpan<char>) with slices of its pooled buffers",
        ["System.Security.Cryptography.HashAlgorithm"] = "HashCore/TryHashFinal are called with rented buffers",
        ["System.Buffers.IBufferWriter`1"] = "writers the framework fills (Utf8JsonWriter, Base64) call GetSpan/Advance; a tenant writer is not needed (ArrayBufferWriter<T> is allowed)",
        ["System.Buffers.MemoryManager`1"] = "a tenant MemoryManager hands the framework memory it controls and is pinned by it",
        ["System.Buffers.ReadOnlySequenceSegment`1"] = "multi-segment sequences reach the framework paths that rent a buffer per segment (finding 1 built one)",
        ["System.ISpanFormattable"] = "the framework calls TryFormat with pooled or uninitialized buffers whose old contents it would expose; implement ToString/IFormattable instead",
        ["System.IUtf8SpanFormattable"] = "the framework calls TryFormat with pooled or uninitialized buffers whose old contents it would expose; implement ToString/IFormattable instead",
        ["System.ISpanParsable`1"] = "Parse(ReadOnlySpan<char>) may be handed a slice of a framework buffer; implement IParsable<T>",
        ["System.IUtf8SpanParsable`1"] = "Parse(ReadOnlySpan<byte>) may be handed a slice of a framework buffer; implement IParsable<T>",
        ["System.Collections.Generic.IDictionary`2"] = "not needed (IReadOnlyDictionary<K,V> is allowed); its CopyTo is handed framework arrays",
        ["System.Collections.IDictionary"] = "not needed (IReadOnlyDictionary<K,V> is allowed); its CopyTo is handed framework arrays",
        ["System.Collections.Generic.ISet`1"] = "not needed; its CopyTo is handed framework arrays",
        ["System.Collections.Generic.IAlternateEqualityComparer`2"] = "dictionaries call it with spans over the caller's or the framework's buffers",
        ["System.Collections.ObjectModel.Collection`1"] = "not needed (hold a collection in a field instead); its virtuals (InsertItem, SetItem…) are called by framework code nobody has audited for this",
        ["System.Collections.ObjectModel.ReadOnlyCollection`1"] = "not needed (hold a collection in a field instead); kept off the list so that no framework caller has to be trusted",
        ["System.Collections.ObjectModel.KeyedCollection`2"] = "not needed (hold a dictionary in a field instead); its virtuals (GetKeyForItem, InsertItem…) are called by framework code nobody has audited for this",
        ["System.Collections.Generic.List`1"] = "not needed (hold a List<T> in a field instead); kept off the list so that no framework caller has to be trusted",
        ["System.Collections.Generic.Dictionary`2"] = "not needed (hold a Dictionary in a field instead); kept off the list so that no framework caller has to be trusted",
        ["System.Runtime.CompilerServices.IAsyncStateMachine"] = "async code is not allowed",
        ["System.Numerics.INumberBase`1"] = "generic math: TryFormat/TryParse over spans are called with framework buffers",
    };

    /// <summary>CopyTo(array, index) is called by framework code (ToArray, List.AddRange, collection constructors) with an array it
    /// allocated or rented, possibly from a shared pool: a CopyTo that read it would see what the array held before.</summary>
    public const string CollectionCopyTo =
        "Count/Contains/Add…: the tenant's own values. CopyTo(array, index) is handed arrays the framework allocated or rented, so it may only write: "
        + "its body must be one of the write-only shapes Roslyn emits (copy from one of the type's own fields with the framework's CopyTo, or store one element)";

    public const string CopyToReads = "CopyTo is handed arrays the framework allocated or rented from a shared pool; it may only copy into them from one of the type's own fields with the framework's CopyTo, or store one element";

    public const string NotListed = "not on the list of framework types tenant types may derive from or implement; see docs/csharp.md";

    /// <summary>The class rule for a framework base (metadata name with arity), or null when deriving from it is refused.
    /// Framework exception types the API allowlist allows share System.Exception's rule.</summary>
    public static DerivableBase? BaseRule(string metadataName, string ns, IReadOnlyList<string> chain)
    {
        if (Bases.TryGetValue(metadataName, out var rule)) return rule;
        if (chain.Count == 1 && metadataName.EndsWith("Exception", StringComparison.Ordinal) && ApiPolicy.CheckType(ns, chain).Access == ApiAccess.Allowed)
            return Bases[ExceptionKey];
        return null;
    }

    /// <summary>Why deriving from / implementing a framework type is refused.</summary>
    public static string Reason(string metadataName) => RefusedWithReason.TryGetValue(metadataName, out var r) ? r : NotListed;

    /// <summary>"System.Collections.Generic.IEnumerable`1" → "System.Collections.Generic.IEnumerable&lt;T&gt;".</summary>
    public static string Display(string metadataName)
    {
        var tick = metadataName.LastIndexOf('`');
        if (tick < 0 || !int.TryParse(metadataName[(tick + 1)..], out var n)) return metadataName;
        return metadataName[..tick] + (n == 1 ? "<T>" : "<" + string.Join(",", Enumerable.Range(1, n).Select(i => "T" + i)) + ">");
    }

    /// <summary>Every entry as "kind:key", so that a test can insist on a probe for each.</summary>
    internal static IEnumerable<string> Entries()
    {
        foreach (var b in Bases.Values)
        {
            yield return "base:" + b.Type;
            foreach (var m in b.Overridable.Keys) yield return $"override:{b.Type}::{m}";
            foreach (var m in b.Refused.Keys) yield return $"refused-override:{b.Type}::{m}";
        }
        foreach (var i in Interfaces.Keys) yield return "interface:" + i;
        foreach (var r in RefusedWithReason.Keys) yield return "refused:" + r;
    }
}
