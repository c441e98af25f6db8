using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Execution;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Issue 27 item 5, time: NodaTime with its bundled tzdb, custom TimeZoneInfo zones, and cultures refused at compile time
/// (TimePolicy). The refusals' escape-corpus cases are runtime/escape-corpus/time-*.cs and culture-*.cs.
/// </summary>
public class TimeTests
{
    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    static string Reducer(string members, string apply) => $$"""
        using System;
        using System.Collections.Generic;
        using System.Globalization;
        using System.Linq;
        using EventSourcing;
        using NodaTime;
        using NodaTime.Text;

        namespace Timely
        {
            public sealed class Day { public string Text { get; set; } = ""; public decimal Total { get; set; } }
            {{members}}

            public sealed class DayReducer : IReducer<Day>
            {
                public Day Apply(Day state, Event e)
                {
                    {{apply}}
                    return state;
                }
            }
        }
        """;

    static JsonObject At(string timestamp, string type = "Sold", object? data = null)
    {
        var e = Events.Make(type, data ?? new { amount = 1m });
        e["timestamp"] = timestamp;
        return e;
    }

    string Run(string members, string apply, string timestamp = "2025-03-30T00:30:00.000Z")
    {
        var compiled = _host.Compile("Timely.cs", Reducer(members, apply));
        Assert.True(compiled["ok"]!.GetValue<bool>(), compiled.ToJsonString());
        _host.CompileAndLoad("timely", new[] { new SourceFile("Timely.cs", Reducer(members, apply)) });
        var r = _host.Apply("timely", "Timely.DayReducer", (null, Events.Array(At(timestamp)))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        return r["states"]![0]!["text"]!.GetValue<string>();
    }

    string Refusal(string members, string apply)
    {
        var result = _host.Compile("Timely.cs", Reducer(members, apply));
        Assert.False(result["ok"]!.GetValue<bool>(), "expected a refusal, it compiled: " + apply);
        return result["compilationError"]!.GetValue<string>();
    }

    [Theory]
    // Berlin's 2025 spring change: 02:00 local → 03:00 on 30 March (01:00 UTC).
    [InlineData("2025-03-30T00:30:00.000Z", "2025-03-30 01:30 +01")]
    [InlineData("2025-03-30T01:30:00.000Z", "2025-03-30 03:30 +02")]
    // 22:30 UTC on 31 Oct is the next local day in Berlin (CET, +01).
    [InlineData("2025-10-31T23:30:00.000Z", "2025-11-01 00:30 +01")]
    public void TheBundledTzdbGivesBerlinLocalTimeAcrossDaylightSaving(string timestamp, string expected)
    {
        var text = Run("", """
            var berlin = DateTimeZoneProviders.Tzdb["Europe/Berlin"];
            var local = Instant.FromDateTimeOffset(e.Timestamp).InZone(berlin);
            state.Text = local.ToString("uuuu-MM-dd HH:mm o<+HH>", CultureInfo.InvariantCulture);
            """, timestamp);
        Assert.Equal(expected, text);
    }

    [Fact]
    public void StaticReadonlyZonesAndValuesOfNodaTimeAreAllowed()
    {
        var text = Run("""
            static class Known
            {
                public static readonly DateTimeZone Berlin = DateTimeZoneProviders.Tzdb["Europe/Berlin"];
                public static readonly LocalDate Epoch = new(2000, 1, 1);
                public static readonly Period Week = Period.FromWeeks(1);
                public static readonly System.Collections.Immutable.ImmutableArray<IsoDayOfWeek> Weekend = System.Collections.Immutable.ImmutableArray.Create(IsoDayOfWeek.Saturday, IsoDayOfWeek.Sunday);
            }
            """, """
            var day = Instant.FromDateTimeOffset(e.Timestamp).InZone(Known.Berlin).Date;
            var pattern = LocalDatePattern.CreateWithInvariantCulture("uuuu-MM-dd");
            state.Text = $"{pattern.Format(day)} {Known.Weekend.Contains(day.DayOfWeek)} {pattern.Format(Known.Epoch + Known.Week)}";
            """, "2025-03-29T23:30:00.000Z");
        Assert.Equal("2025-03-30 True 2000-01-08", text);
    }

    [Theory]
    [InlineData("a zone cache of its own", "public static readonly IDateTimeZoneProvider P = new NodaTime.TimeZones.DateTimeZoneCache(NodaTime.TimeZones.TzdbDateTimeZoneSource.Default);")]
    [InlineData("a zoned pattern (it keeps a provider)", "public static readonly ZonedDateTimePattern P = ZonedDateTimePattern.ExtendedFormatOnlyIso;")]
    [InlineData("a pattern (it keeps its culture's pattern caches)", "public static readonly LocalDatePattern P = LocalDatePattern.Create(\"uuuu\", (System.Globalization.CultureInfo)System.Globalization.CultureInfo.InvariantCulture.Clone());")]
    [InlineData("a composite pattern (the tenant's delegates)", "public static readonly IPattern<LocalDate> P = new CompositePatternBuilder<LocalDate> { { LocalDatePattern.Iso, d => true } }.Build();")]
    public void StaticReadonlyFieldsThatCouldHoldStateStayRefused(string what, string field)
    {
        var message = Refusal("static class Known { " + field + " }", "state.Text = \"x\";");
        Assert.True(message.Contains("Known.P", StringComparison.Ordinal), $"{what}: {message}");
    }

    [Fact]
    public void ThePatternsPeriodsAndCalendarsOfNodaTimeRun()
    {
        var text = Run("", """
            var d = LocalDatePattern.Iso.Parse("2024-02-28").Value;
            var p = Period.Between(d, new LocalDate(2025, 3, 1), PeriodUnits.Days);
            var version = DateTimeZoneProviders.Tzdb.VersionId;
            var ny = new LocalDateTime(2025, 3, 9, 2, 30).InZoneLeniently(DateTimeZoneProviders.Tzdb["America/New_York"]);
            state.Text = $"{d.PlusDays(1):uuuu-MM-dd} {p.Days} {version.StartsWith("TZDB: ")} {ny.Offset} {d.WithCalendar(CalendarSystem.Julian).Day}";
            """);
        Assert.Equal("2024-02-29 367 True -04 15", text);
    }

    [Fact]
    public void ACustomTimeZoneWithAdjustmentRulesCompilesAndRuns()
    {
        var text = Run("""
            static class Zones
            {
                public static TimeZoneInfo Berlin()
                {
                    var start = TimeZoneInfo.TransitionTime.CreateFloatingDateRule(new DateTime(1, 1, 1, 2, 0, 0), 3, 5, DayOfWeek.Sunday);
                    var end = TimeZoneInfo.TransitionTime.CreateFloatingDateRule(new DateTime(1, 1, 1, 3, 0, 0), 10, 5, DayOfWeek.Sunday);
                    var rule = TimeZoneInfo.AdjustmentRule.CreateAdjustmentRule(DateTime.MinValue.Date, DateTime.MaxValue.Date, TimeSpan.FromHours(1), start, end);
                    return TimeZoneInfo.CreateCustomTimeZone("Custom/Berlin", TimeSpan.FromHours(1), "Berlin", "CET", "CEST", new[] { rule });
                }
            }
            """, """
            var zone = Zones.Berlin();
            var local = TimeZoneInfo.ConvertTime(e.Timestamp, zone);
            var unspecified = TimeZoneInfo.ConvertTime(new DateTime(2025, 7, 1, 12, 0, 0), zone); // "local" is UTC in the host
            state.Text = $"{local:yyyy-MM-dd HH:mm zzz} {zone.IsDaylightSavingTime(local)} {unspecified:HH:mm} {TimeZoneInfo.Utc.Id}";
            """, "2025-03-30T01:30:00.000Z");
        Assert.Equal("2025-03-30 03:30 +02:00 True 14:00 UTC", text);
    }

    [Theory]
    [InlineData("SystemClock", "_ = SystemClock.Instance.GetCurrentInstant();", "NodaTime.SystemClock", "reads the machine's clock")]
    [InlineData("Bcl provider", "_ = DateTimeZoneProviders.Bcl.GetSystemDefault();", "NodaTime.DateTimeZoneProviders.Bcl", "only DateTimeZoneProviders.Tzdb")]
    [InlineData("Serialization provider", "_ = DateTimeZoneProviders.Serialization;", "NodaTime.DateTimeZoneProviders.Serialization", "only DateTimeZoneProviders.Tzdb")]
    [InlineData("BclDateTimeZone", "_ = NodaTime.TimeZones.BclDateTimeZone.ForSystemDefault();", "NodaTime.TimeZones.BclDateTimeZone", "reads the machine's time zones")]
    [InlineData("BclDateTimeZoneSource", "_ = new NodaTime.TimeZones.BclDateTimeZoneSource();", "NodaTime.TimeZones.BclDateTimeZoneSource", "reads the machine's time zones")]
    [InlineData("FromStream", "_ = NodaTime.TimeZones.TzdbDateTimeZoneSource.FromStream(null!);", "TzdbDateTimeZoneSource.FromStream", "loading a time-zone database")]
    [InlineData("TypeConverterSettings", "NodaTime.Text.TypeConverterSettings.DateTimeZoneProvider = DateTimeZoneProviders.Tzdb;", "NodaTime.Text.TypeConverterSettings", "settable process-wide setting")]
    [InlineData("XmlSerializationSettings", "NodaTime.Xml.XmlSerializationSettings.DateTimeZoneProvider = DateTimeZoneProviders.Tzdb;", "NodaTime.Xml.XmlSerializationSettings", "settable process-wide setting")]
    [InlineData("TimeZoneInfo.Local", "_ = TimeZoneInfo.Local;", "System.TimeZoneInfo.Local", "reads the machine's time zones")]
    [InlineData("FindSystemTimeZoneById", "_ = TimeZoneInfo.FindSystemTimeZoneById(\"Europe/Berlin\");", "System.TimeZoneInfo.FindSystemTimeZoneById", "reads the machine's time zones")]
    [InlineData("GetSystemTimeZones", "_ = TimeZoneInfo.GetSystemTimeZones();", "System.TimeZoneInfo.GetSystemTimeZones", "reads the machine's time zones")]
    [InlineData("ConvertTimeBySystemTimeZoneId", "_ = TimeZoneInfo.ConvertTimeBySystemTimeZoneId(e.Timestamp, \"Europe/Berlin\");", "System.TimeZoneInfo.ConvertTimeBySystemTimeZoneId", "reads the machine's time zones")]
    [InlineData("TimeZoneInfo.ClearCachedData", "TimeZoneInfo.ClearCachedData();", "System.TimeZoneInfo.ClearCachedData", "reads the machine's time zones")]
    [InlineData("GetCultureInfo", "_ = CultureInfo.GetCultureInfo(\"de-DE\");", "System.Globalization.CultureInfo.GetCultureInfo", "use CultureInfo.InvariantCulture")]
    [InlineData("new CultureInfo", "_ = new CultureInfo(\"de-DE\");", "System.Globalization.CultureInfo.#ctor", "use CultureInfo.InvariantCulture")]
    [InlineData("CreateSpecificCulture", "_ = CultureInfo.CreateSpecificCulture(\"de\");", "System.Globalization.CultureInfo.CreateSpecificCulture", "use CultureInfo.InvariantCulture")]
    [InlineData("GetCultures", "_ = CultureInfo.GetCultures(CultureTypes.AllCultures);", "System.Globalization.CultureInfo.GetCultures", "use CultureInfo.InvariantCulture")]
    [InlineData("CultureInfo.ClearCachedData", "CultureInfo.InvariantCulture.ClearCachedData();", "System.Globalization.CultureInfo.ClearCachedData", "culture caches")]
    [InlineData("RegionInfo", "_ = new RegionInfo(\"DE\");", "System.Globalization.RegionInfo", "regions are not available")]
    [InlineData("CompareInfo.GetCompareInfo", "_ = CompareInfo.GetCompareInfo(\"de-DE\");", "System.Globalization.CompareInfo.GetCompareInfo", "use CultureInfo.InvariantCulture")]
    public void WhatReadsTheMachineOrSetsAProcessWideSettingIsRefusedAtCompileTime(string what, string apply, string api, string reason)
    {
        var message = Refusal("", apply);
        Assert.True(message.Contains("ES0001", StringComparison.Ordinal) && message.Contains(api, StringComparison.Ordinal) && message.Contains(reason, StringComparison.Ordinal),
            $"{what}: {message}");
    }

    [Fact]
    public void NodaTimeResolvesToTheHostsOneCopy()
    {
        _host.CompileAndLoad("timely-copy", new[] { new SourceFile("Timely.cs", Reducer("", "state.Text = typeof(Instant).Name;")) });
        var loaded = AppDomain.CurrentDomain.GetAssemblies().Where(a => a.GetName().Name == "NodaTime").ToList();
        Assert.Single(loaded);
        Assert.Same(typeof(NodaTime.Instant).Assembly, loaded[0]);
    }

    [Fact]
    public void NothingATenantsPatternsParsedOutlivesTheNextCall()
    {
        // 20 patterns of 1 Mi characters (each held as its text and its parsed literal): ~80 MiB if the caches kept them.
        var members = "static class Text { public static string Big(int i) => \"'\" + new string('x', 1 << 20) + i + \"' uuuu\"; }";
        var apply = "for (var i = 0; i < 20; i++) { _ = LocalDatePattern.CreateWithInvariantCulture(Text.Big(i)); _ = new LocalDate(2025, 1, 1).ToString(Text.Big(100 + i), null); } state.Text = \"ok\";";
        _host.CompileAndLoad("timely-patterns", new[] { new SourceFile("Timely.cs", Reducer(members, apply)) });
        _host.CompileAndLoad("timely-small", new[] { new SourceFile("Timely.cs", Reducer("", "state.Text = new LocalDate(2025, 1, 1).ToString(\"uuuu\", null);")) });
        GC.Collect();
        GC.WaitForPendingFinalizers();
        var before = GC.GetTotalMemory(forceFullCollection: true);
        var r = _host.Apply("timely-patterns", "Timely.DayReducer", (null, Events.Array(At("2025-01-01T00:00:00Z")))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        // The next call (another tenant's, or the same one's) starts by emptying NodaTime's caches.
        var small = _host.Apply("timely-small", "Timely.DayReducer", (null, Events.Array(At("2025-01-01T00:00:00Z")))).Single()!;
        Assert.Equal("2025", small["states"]![0]!["text"]!.GetValue<string>());
        var after = GC.GetTotalMemory(forceFullCollection: true);
        Assert.True(after - before < (16L << 20), $"held after the next call: {(after - before) >> 20} MiB");
        Assert.True(NodaTimeCaches.HeldPatterns() <= 2, $"{NodaTimeCaches.HeldPatterns()} patterns held");
    }

    [Fact]
    public void ACallOfCodeWithoutNodaTimeStillEmptiesWhatANodaTimeCallLeft()
    {
        var apply = "for (var i = 0; i < 5; i++) _ = LocalDatePattern.CreateWithInvariantCulture(\"uuuu'-\" + i + \"-'MM\"); state.Text = \"ok\";";
        _host.CompileAndLoad("timely-few", new[] { new SourceFile("Timely.cs", Reducer("", apply)) });
        _host.CompileAndLoad("plain-after", new[] { new SourceFile("Plain.cs", "using EventSourcing;\nnamespace Plain { public sealed class S { public int N { get; set; } } public sealed class R : IReducer<S> { public S Apply(S s, Event e) { s.N++; return s; } } }") });
        var r = _host.Apply("timely-few", "Timely.DayReducer", (null, Events.Array(At("2025-01-01T00:00:00Z")))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        Assert.True(NodaTimeCaches.HeldPatterns() >= 5, $"{NodaTimeCaches.HeldPatterns()} patterns held after the NodaTime call");
        var plain = _host.Apply("plain-after", "Plain.R", (null, Events.Array(At("2025-01-01T00:00:00Z")))).Single()!;
        Assert.True(plain["ok"]!.GetValue<bool>(), plain.ToJsonString());
        Assert.Equal(0, NodaTimeCaches.HeldPatterns());
    }

    [Fact]
    public void ClearingNodaTimesCachesWorksOnThisVersion() => NodaTimeCaches.SelfTest();

    [Fact]
    public void TheHostsLocalTimeZoneIsUtc()
    {
        HostSetup.ConfigureProcess();
        Assert.Equal(TimeSpan.Zero, TimeZoneInfo.Local.BaseUtcOffset);
        Assert.False(TimeZoneInfo.Local.SupportsDaylightSavingTime);
    }
}
