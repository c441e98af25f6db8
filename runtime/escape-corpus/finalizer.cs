// expect: compile-error finalizer
// A finalizer runs on the finalizer thread, outside any request.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        ~EscapeReducer() { while (true) { } }

        public EscapeState Apply(EscapeState state, Event e)
        {
            return state;
        }
    }
}
