// expect: compile-error TzdbDateTimeZoneSource.FromStream
// Issue 27 (time): load another time-zone database (tenant bytes: unbounded parsing, another tzdb than the service's).
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
            var source = TzdbDateTimeZoneSource.FromStream(null!);
            state.Value = source.TzdbVersion;
            return state;
        }
    }
}
