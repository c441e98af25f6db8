// expect: compile-error TzdbDateTimeZoneSource.ForId
// Issue 27 (time): ForId builds a new copy of a zone on every call (outside the shared provider's cache): kept in a
// static field, each copy's interval cache would fill in later calls, uncharged.
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
            state.Value = TzdbDateTimeZoneSource.Default.ForId("Europe/Berlin").Id;
            return state;
        }
    }
}
