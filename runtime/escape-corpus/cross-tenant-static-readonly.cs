// expect: compile-error static readonly field
// Issue 12: a static readonly collection holding the events seen, for whoever else runs in the shared executor.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static readonly List<Event> Seen = new();

        public EscapeState Apply(EscapeState state, Event e)
        {
            Seen.Add(e);
            state.Count = Seen.Count;
            return state;
        }
    }
}
