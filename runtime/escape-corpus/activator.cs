// expect: compile-error System.Activator
// Creates an arbitrary type by reflection.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var o = System.Activator.CreateInstance(typeof(EscapeState));
            state.Value = o?.ToString() ?? "";
            return state;
        }
    }
}
