// expect: compile-error System.Threading.Timer
// A timer firing outside requests.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var t = new System.Threading.Timer(_ => { }, null, 0, 1000);
            return state;
        }
    }
}
