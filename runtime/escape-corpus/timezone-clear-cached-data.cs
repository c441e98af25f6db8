// expect: compile-error System.TimeZoneInfo.ClearCachedData
// Issue 27 (time): clears process-wide caches (the local zone, the system zones) for everyone.
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
            TimeZoneInfo.ClearCachedData();
            return state;
        }
    }
}
