// expect: compile-error async
// An async method (state machine on the thread pool).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static async System.Threading.Tasks.Task<int> Later() { await System.Threading.Tasks.Task.Yield(); return 1; }

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Later().GetAwaiter().GetResult();
            return state;
        }
    }
}
