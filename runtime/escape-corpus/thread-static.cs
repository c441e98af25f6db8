// expect: compile-error System.ThreadStaticAttribute
// [ThreadStatic] state.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        [System.ThreadStatic] private static long _calls;

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++_calls;
            return state;
        }
    }
}
