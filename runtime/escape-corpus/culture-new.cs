// expect: compile-error System.Globalization.CultureInfo.#ctor
// Issue 27 (time): a named culture by constructor (fails at run time in invariant mode).
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
            state.Value = 1.5m.ToString(new CultureInfo("de-DE"));
            return state;
        }
    }
}
