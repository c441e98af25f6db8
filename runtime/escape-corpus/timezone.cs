// expect: compile-error System.TimeZoneInfo
// Machine-dependent local time zone.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.TimeZoneInfo.Local.Id;
            return state;
        }
    }
}
