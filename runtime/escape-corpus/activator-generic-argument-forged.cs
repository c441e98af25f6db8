// expect: compile-error System.Activator.CreateInstance
// Issue 27: the trusted lowering names a new()-constrained type parameter; a concrete type written as the argument by
// hand is not that lowering and is refused.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.Activator.CreateInstance<EscapeState>().Value;
            return state;
        }
    }
}
