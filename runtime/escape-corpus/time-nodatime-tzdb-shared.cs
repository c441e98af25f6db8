// expect: runtime-isolated
// Issue 27 (time): the shared tzdb provider is one cache for every tenant of an executor. What a tenant can do with it:
// ask for zones (the 597 of the embedded tzdb, immutable, the same for all: at most ~11 MiB when every zone was used
// over two centuries), ask for unknown ids and fixed offsets (not cached: nothing grows), read its version. Outcome: it
// learns only the tzdb's own data; nothing of another tenant, and nothing it does makes the cache grow past the tzdb.
using System;
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;
using NodaTime.TimeZones;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    static class Zones { public static readonly DateTimeZone Berlin = DateTimeZoneProviders.Tzdb["Europe/Berlin"]; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var tzdb = DateTimeZoneProviders.Tzdb;
            var found = 0;
            for (var i = 0; i < 1000; i++) if (tzdb.GetZoneOrNull("Tenant/Zone" + state.Count + "-" + i) is not null) found++;
            for (var i = 0; i < 1000; i++) if (tzdb.GetZoneOrNull("UTC+01:" + (i % 60).ToString("00", CultureInfo.InvariantCulture)) is not null) found++;
            state.Count++;
            state.Value = found == 1000 && tzdb.VersionId.StartsWith("TZDB: ", StringComparison.Ordinal) && Zones.Berlin.Id == "Europe/Berlin" ? "mine" : "unexpected " + found;
            return state;
        }
    }
}
