// expect: compile-error System.Threading
// A lock (Monitor) on a shared object.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            lock (this) { state.Count++; }
            return state;
        }
    }
}
