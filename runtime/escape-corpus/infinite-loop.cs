// expect: runtime-contained
// Never returns: the TypeScript side kills the executor at its deadline.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            while (true) { }
            return state;
        }
    }
}
