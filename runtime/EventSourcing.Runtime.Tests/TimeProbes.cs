namespace EventSourcing.Runtime.Tests;

/// <summary>SameVerdictTests' probes for TimePolicy's entries (NodaTime, TimeZoneInfo, cultures).</summary>
static class TimeProbes
{
    static SameVerdictTests.Probe Refused(string entry, string statement, string refused) => new(entry, statement, refused);
    static SameVerdictTests.Probe Allowed(string entry, string statement) => new(entry, statement, null);

    public static IEnumerable<SameVerdictTests.Probe> All()
    {
        yield return Refused("time-denied-namespace:NodaTime.Xml", "_ = typeof(NodaTime.Xml.XmlSerializationSettings).Name;", "NodaTime.Xml.XmlSerializationSettings");
        yield return Refused("time-denied-type:NodaTime.SystemClock", "_ = NodaTime.SystemClock.Instance;", "NodaTime.SystemClock");
        yield return Refused("time-denied-type:NodaTime.Extensions.StopwatchExtensions", "_ = typeof(NodaTime.Extensions.StopwatchExtensions).Name;", "NodaTime.Extensions.StopwatchExtensions");
        yield return Refused("time-denied-type:NodaTime.Extensions.TimeProviderExtensions", "_ = typeof(NodaTime.Extensions.TimeProviderExtensions).Name;", "NodaTime.Extensions.TimeProviderExtensions");
        yield return Refused("time-denied-type:NodaTime.TimeZones.BclDateTimeZone", "_ = typeof(NodaTime.TimeZones.BclDateTimeZone).Name;", "NodaTime.TimeZones.BclDateTimeZone");
        yield return Refused("time-denied-type:NodaTime.TimeZones.BclDateTimeZoneSource", "_ = new NodaTime.TimeZones.BclDateTimeZoneSource();", "NodaTime.TimeZones.BclDateTimeZoneSource");
        yield return Refused("time-denied-type:NodaTime.Text.TypeConverterSettings", "_ = NodaTime.Text.TypeConverterSettings.DateTimeZoneProvider;", "NodaTime.Text.TypeConverterSettings");
        yield return Refused("time-denied-type:NodaTime.TimeZones.DateTimeZoneCache", "_ = new NodaTime.TimeZones.DateTimeZoneCache(NodaTime.TimeZones.TzdbDateTimeZoneSource.Default);", "NodaTime.TimeZones.DateTimeZoneCache");
        yield return Refused("time-denied-member:NodaTime.TimeZones.TzdbDateTimeZoneSource::ForId", "_ = NodaTime.TimeZones.TzdbDateTimeZoneSource.Default.ForId(\"Europe/Berlin\");", "TzdbDateTimeZoneSource.ForId");
        yield return Refused("time-denied-type:System.Globalization.RegionInfo", "_ = typeof(System.Globalization.RegionInfo).Name;", "System.Globalization.RegionInfo");
        yield return Allowed("time-only-members:NodaTime.DateTimeZoneProviders", "_ = NodaTime.DateTimeZoneProviders.Tzdb[\"Europe/Berlin\"].Id;");
        yield return Refused("time-only-members:NodaTime.DateTimeZoneProviders", "_ = NodaTime.DateTimeZoneProviders.Bcl;", "NodaTime.DateTimeZoneProviders.Bcl");
        yield return Allowed("time-only-members:System.TimeZoneInfo", "_ = System.TimeZoneInfo.CreateCustomTimeZone(\"x\", System.TimeSpan.FromHours(1), \"x\", \"x\").Id;");
        yield return Refused("time-only-members:System.TimeZoneInfo", "_ = System.TimeZoneInfo.Local;", "System.TimeZoneInfo.Local");
        yield return Refused("time-denied-member:NodaTime.TimeZones.TzdbDateTimeZoneSource::FromStream", "_ = NodaTime.TimeZones.TzdbDateTimeZoneSource.FromStream(null!);", "TzdbDateTimeZoneSource.FromStream");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::.ctor", "_ = new System.Globalization.CultureInfo(\"de-DE\");", "named cultures are not available");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::GetCultureInfo", "_ = System.Globalization.CultureInfo.GetCultureInfo(\"de-DE\");", "System.Globalization.CultureInfo.GetCultureInfo");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::GetCultureInfoByIetfLanguageTag", "_ = System.Globalization.CultureInfo.GetCultureInfoByIetfLanguageTag(\"de-DE\");", "System.Globalization.CultureInfo.GetCultureInfoByIetfLanguageTag");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::CreateSpecificCulture", "_ = System.Globalization.CultureInfo.CreateSpecificCulture(\"de\");", "System.Globalization.CultureInfo.CreateSpecificCulture");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::GetCultures", "_ = System.Globalization.CultureInfo.GetCultures(System.Globalization.CultureTypes.AllCultures);", "System.Globalization.CultureInfo.GetCultures");
        yield return Refused("time-denied-member:System.Globalization.CultureInfo::ClearCachedData", "System.Globalization.CultureInfo.InvariantCulture.ClearCachedData();", "System.Globalization.CultureInfo.ClearCachedData");
        yield return Refused("time-denied-member:System.Globalization.CompareInfo::GetCompareInfo", "_ = System.Globalization.CompareInfo.GetCompareInfo(\"de-DE\");", "System.Globalization.CompareInfo.GetCompareInfo");
    }
}
