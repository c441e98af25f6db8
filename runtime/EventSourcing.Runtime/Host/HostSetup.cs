using System.Globalization;

namespace EventSourcing.Runtime.Host;

public static class HostSetup
{
    // Process-wide on purpose: the settings it guards (TZ, default cultures, the regex timeout and cache) are the
    // process's; set once, before any request (the in-process tests call it from several places).
    static bool _configured;

    /// <summary>Deterministic process settings for tenant code: UTC time zone, invariant culture, and a
    /// default regex match timeout (EVENTSOURCING_REGEX_TIMEOUT_MS, default 2000) against catastrophic backtracking.</summary>
    public static void ConfigureProcess()
    {
        if (_configured) return;
        _configured = true;
        Environment.SetEnvironmentVariable("TZ", "UTC");
        CultureInfo.DefaultThreadCurrentCulture = CultureInfo.InvariantCulture;
        CultureInfo.DefaultThreadCurrentUICulture = CultureInfo.InvariantCulture;
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
        CultureInfo.CurrentUICulture = CultureInfo.InvariantCulture;
        var ms = int.TryParse(Environment.GetEnvironmentVariable("EVENTSOURCING_REGEX_TIMEOUT_MS"), out var v) && v > 0 ? v : 2000;
        AppContext.SetData("REGEX_DEFAULT_MATCH_TIMEOUT", TimeSpan.FromMilliseconds(ms));
        // The static Regex methods keep the last CacheSize patterns they parsed in a process-wide cache: a tenant's
        // patterns of millions of characters would stay held after its call, charged to nobody, until they fill the
        // heap and a neighbour's call is failed for it (issue 22 red team, escape-corpus/memory-regex-cache.cs).
        // No cache: a static call parses its pattern each time, and what it parsed dies with the call.
        System.Text.RegularExpressions.Regex.CacheSize = 0;
    }
}
