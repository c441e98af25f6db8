// expect: compile-error System.Linq.Expressions
// Generates code at run time.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Linq.Expressions.Expression<System.Func<int>> x = () => 1;
            state.Count = x.Compile()();
            return state;
        }
    }
}
