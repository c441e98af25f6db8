// expect: compile-error finalizer
// Issue 12: a finalizer runs on the GC's finalizer thread, in between other tenants' calls: it would see whatever the
// process holds then, outside any call of its tenant.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class Spy
    {
        private readonly string _seen;
        public Spy(string seen) => _seen = seen;
        ~Spy() { _ = _seen.Length; }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = new Spy(e.AggregateId);
            return state;
        }
    }
}
