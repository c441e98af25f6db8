// expect: compile-error System.TimeZoneInfo.GetSystemTimeZones
// Issue 27 (time): lists the machine's zones (and fills TimeZoneInfo's process-wide cache).
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
            state.Value = TimeZoneInfo.GetSystemTimeZones().Count.ToString(CultureInfo.InvariantCulture);
            return state;
        }
    }
}
