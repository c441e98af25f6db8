// expect: compile-error System.String.Intern
// Fills the process-wide intern pool.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            for (var i = 0; i < 1_000_000; i++) string.Intern(e.EventId + i);
            return state;
        }
    }
}
