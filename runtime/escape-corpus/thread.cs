// expect: compile-error System.Threading.Thread
// Spawns a thread that outlives the request.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var t = new System.Threading.Thread(() => { while (true) { } });
            t.Start();
            return state;
        }
    }
}
