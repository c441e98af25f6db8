// expect: compile-error NodaTime.DateTimeZoneProviders.Bcl
// Issue 27 (time): the BCL provider reads the machine's time zones (its tzdata, or Windows' registry).
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
            state.Value = DateTimeZoneProviders.Bcl.GetSystemDefault().Id;
            return state;
        }
    }
}
