// expect: compile-error System.Threading.Tasks.Task
// Runs work on the thread pool.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = System.Threading.Tasks.Task.Run(() => 42).Result;
            return state;
        }
    }
}
