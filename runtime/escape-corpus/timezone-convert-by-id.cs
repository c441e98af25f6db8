// expect: compile-error System.TimeZoneInfo.ConvertTimeBySystemTimeZoneId
// Issue 27 (time): converts through a zone looked up in the machine's database.
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
            state.Value = TimeZoneInfo.ConvertTimeBySystemTimeZoneId(e.Timestamp, "Europe/Berlin").ToString(CultureInfo.InvariantCulture);
            return state;
        }
    }
}
