// expect: compile-error Known.Pattern
// Issue 27 (time) red team, on the change itself: NodaTime parses pattern text through the format info of the pattern's
// culture, which keeps the last 50 patterns it parsed per value type. The host empties the invariant culture's caches and
// NodaTime's cache of other cultures' format infos before every call (Execution/NodaTimeCaches), but a pattern kept in a
// static field keeps its own culture's format info (here a clone's) out of that reach: each call's WithPatternText could
// add a 2 MiB pattern to caches nobody empties and nobody is charged for (refused on that reading, not measured: whether
// WithPatternText goes through the cache differs by pattern type). So static readonly fields may hold NodaTime's values,
// zones and calendars, not its patterns (TimePolicy.ImmutableStaticTypes).
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    static class Known
    {
        public static readonly OffsetDatePattern Pattern = OffsetDatePattern.Create("uuuu-MM-ddo<g>", (CultureInfo)CultureInfo.InvariantCulture.Clone(), default);
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var big = Known.Pattern.WithPatternText("'" + state.Count + new string('a', 1 << 20) + "' uuuu");
            state.Count++;
            state.Value = big.Format(new OffsetDate(new LocalDate(2025, 1, 1), Offset.Zero)).Length > 0 ? "mine" : "";
            return state;
        }
    }
}
