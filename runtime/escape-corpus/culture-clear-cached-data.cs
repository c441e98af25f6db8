// expect: compile-error System.Globalization.CultureInfo.ClearCachedData
// Issue 27 (time): clears process-wide culture and time-zone caches for everyone.
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
            CultureInfo.InvariantCulture.ClearCachedData();
            return state;
        }
    }
}
