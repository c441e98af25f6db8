// expect: compile-error NodaTime.TimeZones.BclDateTimeZone
// Issue 27 (time): BclDateTimeZone wraps the machine's local zone (ForSystemDefault) or a TimeZoneInfo.
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
            state.Value = BclDateTimeZone.ForSystemDefault().Id;
            return state;
        }
    }
}
