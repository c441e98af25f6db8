// expect: compile-error System.Environment.FailFast
// Kills the host process.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Environment.FailFast("bye");
            return state;
        }
    }
}
