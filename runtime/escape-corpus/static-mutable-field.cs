// expect: compile-error static mutable field
// Counts across calls (and tenants) in a static field.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static long _calls;

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++_calls;
            return state;
        }
    }
}
