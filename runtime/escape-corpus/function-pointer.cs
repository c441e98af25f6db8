// expect: compile-error unsafe code is not allowed
// Function pointers.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            delegate*<int> f = null;
            return state;
        }
    }
}
