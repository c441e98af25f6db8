// expect: compile-error System.IO.File.ReadAllText
// Reads /etc/passwd.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.IO.File.ReadAllText("/etc/passwd");
            return state;
        }
    }
}
