// expect: compile-error System.Runtime.InteropServices
// Allocates native memory.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var p = System.Runtime.InteropServices.Marshal.AllocHGlobal(1 << 30);
            return state;
        }
    }
}
