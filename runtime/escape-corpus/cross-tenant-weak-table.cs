// expect: compile-error GC-dependent tables are not allowed
// Issue 12: attach data to an object every tenant shares (the SDK's Event type object) for another tenant to read.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var table = new System.Runtime.CompilerServices.ConditionalWeakTable<object, string>();
            table.AddOrUpdate(typeof(Event), e.AggregateId);
            return state;
        }
    }
}
