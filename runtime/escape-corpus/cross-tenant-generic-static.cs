// expect: compile-error static mutable field Escape.Mailbox`1.Last
// Issue 12: a static field of a generic type instantiated over a type every tenant shares (the SDK's Event), as a mailbox
// between tenants. (The instantiation is per load context anyway: Mailbox<Event> of one tenant is not another's.)
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public static class Mailbox<T> { public static T? Last; }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var before = Mailbox<Event>.Last;
            Mailbox<Event>.Last = e;
            state.Value = before?.Data.ToString() ?? "";
            return state;
        }
    }
}
