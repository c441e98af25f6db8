// expect: compile-error System.Environment.TickCount
// Non-deterministic clock.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = System.Environment.TickCount64;
            return state;
        }
    }
}
