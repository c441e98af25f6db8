// expect: compile-error System.Globalization.CultureInfo.CreateSpecificCulture
// Issue 27 (time): a named culture (fails at run time in invariant mode).
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
            state.Value = CultureInfo.CreateSpecificCulture("de").Name;
            return state;
        }
    }
}
