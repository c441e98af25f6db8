// expect: runtime-contained
// An endless loop in a static constructor: it runs on first use, inside the first Apply, and never
// returns; the TypeScript side kills the executor at its deadline like any other endless loop.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        static EscapeReducer()
        {
            while (true) { }
        }

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count++;
            return state;
        }
    }
}
