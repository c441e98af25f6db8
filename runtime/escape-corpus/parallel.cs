// expect: compile-error System.Threading.Tasks.Parallel
// Parallel loops.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Threading.Tasks.Parallel.For(0, 10, i => { });
            return state;
        }
    }
}
