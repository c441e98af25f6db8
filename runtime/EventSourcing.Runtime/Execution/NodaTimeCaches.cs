using System.Globalization;
using System.Reflection;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// NodaTime's process-wide pattern caches, emptied before every tenant call that follows a call of code referencing NodaTime
/// (issue 27, the time slice's attack; <see cref="BeforeCall"/>). NodaTime
/// keeps the last 50 patterns it parsed per value type (LocalDate, Instant, ZonedDateTime… 12 of them) in each culture's
/// format info — the invariant one's is a static, and the others sit in a static cache of up to 500 cultures — whether a
/// pattern came from <c>LocalDatePattern.CreateWithInvariantCulture(text)</c> or from <c>ToString(text, provider)</c> (the
/// latter reachable through <c>IFormattable</c>, where no IL check sees it). A tenant's patterns of a million characters
/// stayed held after its call, charged to nobody: 60 of them held 193 MiB (measured), the Regex cache's finding of issue 22
/// again. Emptied before each call, nothing a call parsed outlives the next call, so what the caches hold during a call is
/// that call's own (transient memory, judged as such when the heap runs out). The cost: a call re-parses its patterns once
/// (a few microseconds each); the clearing itself is 13 reflection calls.
///
/// <para>Reflection over NodaTime's internals, pinned by the package version (EventSourcing.Runtime.csproj): the names are
/// checked once at start (<see cref="SelfTest"/>, the host refuses to run tenant code without it), so a NodaTime update that
/// moves them fails the host's start and its tests, never silently.</para>
///
/// <para>Not cleared, and bounded: the tzdb provider's zone cache (the 597 zones of the embedded tzdb, each with a fixed-size
/// cache of zone intervals: at most ~11 MiB when every zone has been used over two centuries, measured; the same immutable
/// data whoever asked), the era names per calendar, the fixed-offset zones (not cached).</para>
/// </summary>
public static class NodaTimeCaches
{
    const BindingFlags Members = BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public;

    /// <summary>One of the invariant format info's pattern parsers: the field holding it, its cache field, and that cache's
    /// Clear and Count (each FixedFormatInfoPatternParser&lt;T&gt; is its own closed type).</summary>
    sealed record Parser(FieldInfo Field, FieldInfo Cache, MethodInfo Clear, PropertyInfo Count);

    // Process-wide on purpose: what this clears is NodaTime's statics, one per process. Nothing here is tenant data.
    static readonly object Invariant;
    static readonly Parser[] Parsers;
    static readonly object CultureCache;
    static readonly MethodInfo CultureCacheClear;

    static NodaTimeCaches()
    {
        var formatInfo = typeof(NodaTime.Instant).Assembly.GetType("NodaTime.Globalization.NodaFormatInfo", throwOnError: true)!;
        Invariant = formatInfo.GetProperty("InvariantInfo", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic)?.GetValue(null)
            ?? throw new InvalidOperationException("NodaFormatInfo.InvariantInfo not found");
        Parsers = formatInfo.GetFields(BindingFlags.Instance | BindingFlags.NonPublic)
            .Where(f => f.FieldType.IsGenericType && f.FieldType.GetGenericTypeDefinition().Name == "FixedFormatInfoPatternParser`1")
            .Select(f =>
            {
                var cache = f.FieldType.GetField("cache", Members) ?? throw new InvalidOperationException($"{f.FieldType}.cache not found");
                return new Parser(f, cache,
                    cache.FieldType.GetMethod("Clear", Members, Type.EmptyTypes) ?? throw new InvalidOperationException("NodaTime's Cache.Clear not found"),
                    cache.FieldType.GetProperty("Count", Members) ?? throw new InvalidOperationException("NodaTime's Cache.Count not found"));
            })
            .ToArray();
        if (Parsers.Length < 12) throw new InvalidOperationException($"NodaFormatInfo: {Parsers.Length} pattern parser fields found, 12 expected");
        CultureCache = formatInfo.GetField("Cache", BindingFlags.Static | BindingFlags.NonPublic)?.GetValue(null)
            ?? throw new InvalidOperationException("NodaFormatInfo.Cache not found");
        CultureCacheClear = CultureCache.GetType().GetMethod("Clear", Members, Type.EmptyTypes)
            ?? throw new InvalidOperationException("NodaTime's Cache.Clear not found");
    }

    /// <summary>Whether code that references NodaTime ran since the caches were last emptied: only it can have filled them
    /// (tenant assemblies reference only the framework list, the SDK and NodaTime, and no NodaTime value reaches code
    /// that does not reference it), so the clearing is skipped, off the hot path, for every other tenant's calls.</summary>
    static bool s_used;

    /// <summary>Before a tenant call on the dispatching thread: empties the caches when code that may have filled them ran
    /// since, and remembers whether this call's code may (a load counts as may: its type initialisers run before its
    /// references are read).</summary>
    public static void BeforeCall(bool callerUsesNodaTime)
    {
        if (s_used)
        {
            Clear();
            s_used = false;
        }
        if (callerUsesNodaTime) s_used = true;
    }

    /// <summary>Drops every pattern NodaTime parsed so far (the invariant culture's parsers' caches, and every other
    /// culture's format info). Runs on the dispatching thread, before a tenant call: nothing else uses NodaTime meanwhile.</summary>
    public static void Clear()
    {
        foreach (var p in Parsers)
            if (p.Field.GetValue(Invariant) is { } parser && p.Cache.GetValue(parser) is { } cache)
                p.Clear.Invoke(cache, null);
        CultureCacheClear.Invoke(CultureCache, null);
    }

    /// <summary>Patterns the invariant culture's parsers hold now.</summary>
    internal static int HeldPatterns() =>
        Parsers.Sum(p => p.Field.GetValue(Invariant) is { } parser && p.Cache.GetValue(parser) is { } cache ? (int)p.Count.GetValue(cache)! : 0);

    /// <summary>Fails (InvalidOperationException) unless clearing works on this NodaTime: a parsed pattern is held, cleared,
    /// and parsing works again afterwards.</summary>
    public static void SelfTest()
    {
        _ = NodaTime.Text.LocalDatePattern.CreateWithInvariantCulture("uuuu'-selftest-'MM").Format(new NodaTime.LocalDate(2000, 1, 1));
        if (HeldPatterns() == 0) throw new InvalidOperationException("NodaTime's invariant pattern caches were not found holding a parsed pattern");
        Clear();
        if (HeldPatterns() != 0) throw new InvalidOperationException("NodaTime's pattern caches were not cleared");
        var again = new NodaTime.LocalDate(2000, 1, 2).ToString("uuuu-MM-dd", CultureInfo.InvariantCulture);
        if (again != "2000-01-02") throw new InvalidOperationException("NodaTime does not format after its caches were cleared: " + again);
        Clear();
    }
}
