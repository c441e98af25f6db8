namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The allowlist's rules for dates, time zones and cultures (issue 27 item 5), consulted by <see cref="ApiPolicy"/> before
/// its own rules. Three decisions:
/// <list type="bullet">
/// <item>NodaTime (a host dependency, in the reference set) is allowed as a whole except what reads the machine
/// (<c>SystemClock</c>, the BCL time-zone provider and source, <c>BclDateTimeZone</c>, Stopwatch/TimeProvider extensions),
/// what loads another time-zone database (<c>TzdbDateTimeZoneSource.FromStream</c>) and its settable statics
/// (<c>DateTimeZoneProviders.Serialization</c>, <c>TypeConverterSettings</c>, <c>NodaTime.Xml</c>): its time zones come
/// from the tzdb embedded in the package, the same on every machine. NodaTime's process-wide pattern caches are emptied
/// before every tenant call (<c>Execution.NodaTimeCaches</c>).</item>
/// <item><c>TimeZoneInfo</c>: custom zones (<c>CreateCustomTimeZone</c>, adjustment rules, transition times) and what
/// computes with a zone in hand are allowed; what reads the machine's zones or its caches is refused. The host pins
/// <c>TZ=UTC</c> (HostSetup), so the conversions that treat a DateTime of kind Local/Unspecified as "local" use UTC.</item>
/// <item><c>CultureInfo</c>: the host runs in invariant globalization mode with predefined cultures only, where every named
/// culture but the invariant one throws <c>CultureNotFoundException</c> at run time. Refused at compile time instead:
/// creating or looking up a culture (and RegionInfo, CompareInfo by name), so the failure points at the line and names
/// <c>CultureInfo.InvariantCulture</c>. Not made to work: a culture's data comes from the machine's ICU, whose version
/// differs between machines and images, so formatting in it would not be deterministic.</item>
/// </list>
/// </summary>
public static class TimePolicy
{
    const string MachineZones = "reads the machine's time zones; use NodaTime's DateTimeZoneProviders.Tzdb (the bundled tzdb) or TimeZoneInfo.CreateCustomTimeZone";
    const string Clock = "reads the machine's clock (non-deterministic); use the event's Timestamp (Instant.FromDateTimeOffset(e.Timestamp))";
    const string SettableStatic = "a settable process-wide setting (shared by every tenant) is not allowed";
    const string OtherDatabase = "loading a time-zone database is not allowed; use DateTimeZoneProviders.Tzdb (the bundled tzdb)";
    const string Culture = "named cultures are not available (the host runs in invariant globalization mode, so it would fail at run time); use CultureInfo.InvariantCulture";
    const string CultureCache = "culture caches are process-wide state and are not allowed";

    /// <summary>NodaTime namespaces refused as a whole.</summary>
    static readonly Dictionary<string, string> DeniedNamespaces = new(StringComparer.Ordinal)
    {
        ["NodaTime.Xml"] = SettableStatic + " (XmlSerializationSettings.DateTimeZoneProvider), and XML is not available",
    };

    /// <summary>Types refused by full name (nested types as Outer+Inner).</summary>
    static readonly Dictionary<string, string> DeniedTypes = new(StringComparer.Ordinal)
    {
        ["NodaTime.SystemClock"] = Clock,
        ["NodaTime.Extensions.StopwatchExtensions"] = Clock,
        ["NodaTime.Extensions.TimeProviderExtensions"] = Clock,
        ["NodaTime.TimeZones.BclDateTimeZone"] = MachineZones,
        ["NodaTime.TimeZones.BclDateTimeZoneSource"] = MachineZones,
        ["NodaTime.Text.TypeConverterSettings"] = SettableStatic + " (TypeConverterSettings.DateTimeZoneProvider)",
        // Every zone a tenant holds comes from the one shared tzdb provider (597 zones, bounded) or is a fixed offset: a cache
        // of its own would fill, in later calls, memory no load charged (one per static field holding one).
        ["NodaTime.TimeZones.DateTimeZoneCache"] = "a zone cache of your own is not allowed; use DateTimeZoneProviders.Tzdb (shared, bounded)",
        ["System.Globalization.RegionInfo"] = "regions are not available (invariant globalization mode)",
    };

    /// <summary>Types whose members are allowed only from a list; others get the reason.</summary>
    static readonly Dictionary<string, (HashSet<string> Members, string Reason)> OnlyMembers = new(StringComparer.Ordinal)
    {
        ["NodaTime.DateTimeZoneProviders"] = (new HashSet<string>(StringComparer.Ordinal) { "get_Tzdb" },
            "only DateTimeZoneProviders.Tzdb is allowed (Bcl reads the machine's time zones; Serialization is a settable process-wide setting)"),
        // Everything that computes with a zone in hand, and custom zones. Not Local, FindSystemTimeZoneById,
        // TryFindSystemTimeZoneById, GetSystemTimeZones, ConvertTimeBySystemTimeZoneId, ClearCachedData,
        // TryConvertIanaIdToWindowsId/TryConvertWindowsIdToIanaId (the machine's ICU data). The overloads that take a
        // DateTime of kind Local or Unspecified as local time (ConvertTime(DateTime, zone), ConvertTimeToUtc(DateTime))
        // see UTC: the host pins TZ=UTC before any request (HostSetup), as it does for DateTime.ToLocalTime.
        ["System.TimeZoneInfo"] = (new HashSet<string>(StringComparer.Ordinal)
        {
            "CreateCustomTimeZone", "get_Utc", "get_Id", "get_DisplayName", "get_StandardName", "get_DaylightName",
            "get_BaseUtcOffset", "get_SupportsDaylightSavingTime", "get_HasIanaId", "GetAdjustmentRules",
            "GetAmbiguousTimeOffsets", "GetUtcOffset", "IsAmbiguousTime", "IsDaylightSavingTime", "IsInvalidTime",
            "ConvertTime", "ConvertTimeFromUtc", "ConvertTimeToUtc", "Equals", "GetHashCode", "HasSameRules", "ToString",
            "ToSerializedString", "FromSerializedString",
        }, MachineZones),
    };

    /// <summary>Members refused on otherwise allowed types: type → member → reason.</summary>
    static readonly Dictionary<string, Dictionary<string, string>> DeniedMembers = new(StringComparer.Ordinal)
    {
        ["NodaTime.TimeZones.TzdbDateTimeZoneSource"] = new(StringComparer.Ordinal)
        {
            ["FromStream"] = OtherDatabase,
            ["ForId"] = "zones come from DateTimeZoneProviders.Tzdb (ForId builds a new copy of the zone each time)",
        },
        ["System.Globalization.CultureInfo"] = new(StringComparer.Ordinal)
        {
            [".ctor"] = Culture, ["GetCultureInfo"] = Culture, ["GetCultureInfoByIetfLanguageTag"] = Culture,
            ["CreateSpecificCulture"] = Culture, ["GetCultures"] = Culture, ["ClearCachedData"] = CultureCache,
        },
        ["System.Globalization.CompareInfo"] = new(StringComparer.Ordinal) { ["GetCompareInfo"] = Culture },
    };

    /// <summary>NodaTime types a <c>static readonly</c> field may have (SignatureProviders.FieldTypeClassifier): immutable values,
    /// and immutable classes tenant types cannot derive from (DerivationPolicy). A DateTimeZone is one of the shared tzdb
    /// provider's (its interval cache is bounded and deterministic) or a fixed offset. Not the text patterns: a pattern keeps
    /// the format info of its culture, whose pattern caches (50 per value type) every later WithPatternText/WithCulture
    /// fills; kept in a static field with a culture of its own (a clone), those caches would be out of reach of
    /// Execution.NodaTimeCaches and fill, call after call, with memory nobody is charged for
    /// (escape-corpus/time-nodatime-static-pattern-culture.cs). Not IPattern&lt;T&gt; either (CompositePatternBuilder's
    /// patterns call the tenant's delegates).</summary>
    public static readonly HashSet<string> ImmutableStaticTypes = new(StringComparer.Ordinal)
    {
        "NodaTime.Instant", "NodaTime.LocalDate", "NodaTime.LocalDateTime", "NodaTime.LocalTime", "NodaTime.Offset", "NodaTime.Duration",
        "NodaTime.OffsetDateTime", "NodaTime.OffsetDate", "NodaTime.OffsetTime", "NodaTime.ZonedDateTime", "NodaTime.AnnualDate",
        "NodaTime.YearMonth", "NodaTime.Interval", "NodaTime.IsoDayOfWeek", "NodaTime.PeriodUnits", "NodaTime.Period",
        "NodaTime.DateInterval", "NodaTime.CalendarSystem", "NodaTime.DateTimeZone",
    };

    /// <summary>The verdict for a type this policy rules on, or null to leave it to <see cref="ApiPolicy"/>.</summary>
    public static ApiVerdict? CheckType(string ns, string fullName)
    {
        if (DeniedTypes.TryGetValue(fullName, out var reason)) return ApiVerdict.Deny(reason);
        if (fullName is "System.TimeZoneInfo" || fullName.StartsWith("System.TimeZoneInfo+", StringComparison.Ordinal))
            return ApiVerdict.Allow; // members of TimeZoneInfo itself restricted (OnlyMembers); AdjustmentRule/TransitionTime whole
        if (ns != "NodaTime" && !ns.StartsWith("NodaTime.", StringComparison.Ordinal)) return null;
        foreach (var (prefix, why) in DeniedNamespaces)
            if (ns == prefix || ns.StartsWith(prefix + ".", StringComparison.Ordinal)) return ApiVerdict.Deny(why);
        return ApiVerdict.Allow;
    }

    /// <summary>The reason a member is refused, or null when this policy has nothing against it.</summary>
    public static string? DeniedMember(string typeFullName, string memberName)
    {
        if (DeniedMembers.TryGetValue(typeFullName, out var members) && members.TryGetValue(memberName, out var reason)) return reason;
        if (OnlyMembers.TryGetValue(typeFullName, out var only) && !only.Members.Contains(memberName)) return only.Reason;
        return null;
    }

    /// <summary>Every explicit entry as "time-…:key" (a test insists on a probe for each).</summary>
    internal static IEnumerable<string> Entries()
    {
        foreach (var ns in DeniedNamespaces.Keys) yield return "time-denied-namespace:" + ns;
        foreach (var type in DeniedTypes.Keys) yield return "time-denied-type:" + type;
        foreach (var type in OnlyMembers.Keys) yield return "time-only-members:" + type;
        foreach (var (type, members) in DeniedMembers)
        foreach (var member in members.Keys)
            yield return $"time-denied-member:{type}::{member}";
    }
}
