namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Framework APIs that the code the Regex and System.Text.Json source generators write needs and that tenant code may not
/// use itself. <see cref="ApiPolicy"/> allows them in IL (an assembly does not say which code a generator wrote);
/// <see cref="GeneratedCodePolicy"/> refuses every use of them in the tenant's own sources.
/// The tables only (linked into the SDK's analyzer and test kit); their uses by the compile host: GeneratorOnlyApis.Usage.cs.
/// </summary>
public static partial class GeneratorOnlyApis
{
    const string JsonMetadata = "JSON contract customization (reflection metadata) is not allowed; only the System.Text.Json source generator's output may use it";
    const string RegexTimeout = "AppContext access is not allowed (process-global state); only the Regex source generator's output reads the host's default match timeout";

    /// <summary>Full type name (namespace.Name without arity, nested with '+') → whether the type itself is allowed to generated
    /// code (else only the listed members of an otherwise allowed type), the members allowed to generated code (null: all), and
    /// the reason tenant code gets.</summary>
    static readonly Dictionary<string, (bool Type, HashSet<string>? Members, string Reason)> Types = new(StringComparer.Ordinal)
    {
        // Generated regex runners read the host's default match timeout (REGEX_DEFAULT_MATCH_TIMEOUT), as Regex itself does.
        ["System.AppContext"] = (true, Set("GetData"), RegexTimeout),
        // Generated JSON metadata: each property's attribute provider is a lazy typeof(T).GetProperty(...) (read only through
        // JsonPropertyInfo.AttributeProvider, a metadata member tenant code cannot reach).
        ["System.Type"] = (false, Set("GetProperty", "GetConstructor", "GetField"), AttributeProvider),
        ["System.Reflection.ICustomAttributeProvider"] = (true, Set(), AttributeProvider),
        ["System.Reflection.BindingFlags"] = (true, Set(), AttributeProvider),
        ["System.Reflection.ParameterModifier"] = (true, Set(), AttributeProvider),
        ["System.Reflection.Binder"] = (true, Set(), AttributeProvider),
        ["System.Reflection.ConstructorInfo"] = (true, Set(), AttributeProvider),
        ["System.Reflection.PropertyInfo"] = (true, Set(), AttributeProvider),
        ["System.Reflection.FieldInfo"] = (true, Set(), AttributeProvider),
        ["System.Text.Json.Serialization.Metadata.JsonTypeInfo"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonPropertyInfo"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonMetadataServices"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonObjectInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonPropertyInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonCollectionInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonParameterInfoValues"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver"] = (true, null, JsonMetadata),
        ["System.Text.Json.Serialization.Metadata.JsonTypeInfoKind"] = (true, null, JsonMetadata),
    };

    const string AttributeProvider = "reflection is not allowed; only the System.Text.Json source generator's output names a property's attributes this way";

    static HashSet<string> Set(params string[] members) => new(members, StringComparer.Ordinal);

    /// <summary>The IL verdict for a type on the list (null when not on it, or when only some of its members are).</summary>
    public static ApiVerdict? TypeVerdict(string fullName) => Types.TryGetValue(fullName, out var e) && e.Type ? ApiVerdict.Allow : null;

    /// <summary>The IL verdict for a member (null: the usual rules decide).</summary>
    public static ApiVerdict? MemberVerdict(string typeFullName, string memberName)
    {
        if (!Types.TryGetValue(typeFullName, out var e)) return null;
        if (e.Members is null || e.Members.Contains(memberName)) return ApiVerdict.Allow;
        return e.Type ? ApiVerdict.Deny(e.Reason) : null;
    }

    internal static IEnumerable<string> Entries() => Types.Keys.Select(t => "generator-only:" + t);
}
