// expect: compile-error ES0002: forbidden construct: copy of a DefaultInterpolatedStringHandler
// Red team (issue 10): a copy of the handler shares the array it rented from ArrayPool<char>.Shared; clearing both returned
// one array to the process-wide pool twice, so two later renters (the host's own string building included) got the same
// array: a later call saw "bb" where it wrote "a" and "b" into two handlers.
// Outcome: the handler may only be used in place, as the compiler does (no ldloc/stloc/ldobj copies, by-value parameters,
// fields or generic arguments of its type).
using System.Runtime.CompilerServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var h = new DefaultInterpolatedStringHandler(300, 0);
            var copy = h;
            h.ToStringAndClear();
            copy.ToStringAndClear();
            return state;
        }
    }
}
