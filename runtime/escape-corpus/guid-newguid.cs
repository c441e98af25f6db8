// expect: compile-error System.Guid.NewGuid
// Non-deterministic ids.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.Guid.NewGuid().ToString();
            return state;
        }
    }
}
