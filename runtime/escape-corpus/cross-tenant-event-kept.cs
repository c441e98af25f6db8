// expect: compile-error static mutable field
// Issue 12: keep the SDK Event of one call (another tenant's, in a shared executor) for the next.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static Event? Previous;

        public EscapeState Apply(EscapeState state, Event e)
        {
            var previous = Previous;
            Previous = e;
            state.Value = previous?.Data.ToString() ?? "";
            return state;
        }
    }
}
