// expect: compile-error System.Diagnostics.Stopwatch
// Non-deterministic timing.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = System.Diagnostics.Stopwatch.GetTimestamp();
            return state;
        }
    }
}
