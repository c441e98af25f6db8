// expect: compile-error NodaTime.TimeZones.DateTimeZoneCache
// Issue 27 (time): a zone cache of the tenant's own in a static field: it loads zones (and their interval caches) lazily in
// later calls, memory no load charged; thousands of such fields would multiply the ~11 MiB of a full tzdb.
using System;
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;
using NodaTime.TimeZones;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    static class Zones { public static readonly IDateTimeZoneProvider Own = new DateTimeZoneCache(TzdbDateTimeZoneSource.Default); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Zones.Own["Europe/Berlin"].Id;
            return state;
        }
    }
}
