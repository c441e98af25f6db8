// expect: runtime-isolated
// Issue 27 (time) red team: NodaTime keeps the last 50 patterns it parsed per value type in process-wide caches (the
// invariant culture's format info, a static): 1 Mi-character patterns made in a call stayed held after it, charged to
// nobody (60 held 193 MiB, measured), the Regex-cache finding of issue 22 again, through CreateWithInvariantCulture and
// through ToString(pattern, provider) (reachable via IFormattable, where no IL check sees it). Closed by the host:
// Execution/NodaTimeCaches empties them before every call (TimeTests.NothingATenantsPatternsParsedOutlivesTheNextCall).
// Shared executors: the patterns it sees are its own.
using System;
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;
using NodaTime.TimeZones;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            // 2 MiB of pattern per event, distinct per call so that each one is a new cache entry.
            var big = "'" + state.Count + new string('a', 1 << 20) + "' uuuu";
            state.Count++;
            var viaCreate = LocalDatePattern.CreateWithInvariantCulture(big).Format(new LocalDate(2025, 1, 1));
            var viaFormattable = ((IFormattable)new LocalDate(2025, 1, 2)).ToString(big, CultureInfo.InvariantCulture);
            state.Value = viaCreate.Length == viaFormattable.Length ? "mine" : "different";
            return state;
        }
    }
}
