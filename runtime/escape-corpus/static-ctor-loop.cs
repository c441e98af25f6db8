// expect: runtime-contained
// An endless loop in a static constructor: it runs when the assembly is loaded (issue 22: every static
// initialiser runs at load) and never returns; the TypeScript side kills the executor at the load's deadline,
// blames the loading tenant, and fails the calls that waited for that load.
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
