// expect: compile-error static mutable field
// A static auto-property is a static mutable field too.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public static long Calls { get; set; }

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++Calls;
            return state;
        }
    }
}
