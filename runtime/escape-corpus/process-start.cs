// expect: compile-error System.Diagnostics.Process
// Starts a shell.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Diagnostics.Process.Start("/bin/sh", "-c id");
            return state;
        }
    }
}
