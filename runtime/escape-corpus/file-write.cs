// expect: compile-error System.IO.File.WriteAllText
// Writes a file.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.IO.File.WriteAllText("/tmp/pwned", e.EventId);
            return state;
        }
    }
}
