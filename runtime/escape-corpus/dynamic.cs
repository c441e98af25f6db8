// expect: compile-error dynamic
// dynamic (runtime binder, reflection).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            dynamic d = state;
            d.Value = "x";
            return state;
        }
    }
}
