// expect: compile-error System.DateTimeOffset.UtcNow
// Non-deterministic clock.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.DateTimeOffset.UtcNow.ToString("O");
            return state;
        }
    }
}
