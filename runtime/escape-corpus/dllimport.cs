// expect: compile-error DllImport
// Calls libc directly.
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        [DllImport("libc")] private static extern int getpid();

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = getpid();
            return state;
        }
    }
}
