// expect: compile-error NodaTime.SystemClock
// Issue 27 (time): NodaTime's clock reads the machine's time: non-deterministic.
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
            state.Value = SystemClock.Instance.GetCurrentInstant().ToString();
            return state;
        }
    }
}
