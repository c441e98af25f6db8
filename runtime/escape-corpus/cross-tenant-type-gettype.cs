// expect: compile-error System.Type.GetType
// Issue 12 (shared executors): another tenant's assembly is loaded in the same process; name one of its types to reach
// its statics and code. The victim's assembly name is Tenant_<hash of its sources>, guessable for a known example.
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
            var t = Type.GetType("Victim.VictimReducer, Tenant_0000000000000000");
            state.Value = t?.FullName ?? "";
            return state;
        }
    }
}
