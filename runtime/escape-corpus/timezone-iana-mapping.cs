// expect: compile-error System.TimeZoneInfo.TryConvertIanaIdToWindowsId
// Issue 27 (time): the id mapping comes from the machine's ICU data.
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
            state.Value = TimeZoneInfo.TryConvertIanaIdToWindowsId("Europe/Berlin", out var id) ? id : "";
            return state;
        }
    }
}
