// expect: compile-error System.TimeZoneInfo.FindSystemTimeZoneById
// Issue 27 (time): the machine's time-zone database (and TimeZoneInfo's process-wide cache of what it found).
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
            state.Value = TimeZoneInfo.FindSystemTimeZoneById("Europe/Berlin").Id;
            return state;
        }
    }
}
