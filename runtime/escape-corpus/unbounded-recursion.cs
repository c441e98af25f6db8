// expect: runtime-contained
// Stack overflow kills the executor process; the TypeScript side replaces it.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static long Recurse(long n) => Recurse(n + 1) + 1;

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Recurse(0);
            return state;
        }
    }
}
