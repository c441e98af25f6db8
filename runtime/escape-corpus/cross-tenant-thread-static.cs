// expect: compile-error System.ThreadStaticAttribute
// Issue 12: every call in a shared executor runs on the same thread; a [ThreadStatic] field would carry one tenant's event
// to the next tenant's call.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        [ThreadStatic] private static Event? Last;

        public EscapeState Apply(EscapeState state, Event e)
        {
            var before = Last;
            Last = e;
            state.Value = before?.AggregateId ?? "";
            return state;
        }
    }
}
