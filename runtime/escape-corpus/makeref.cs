// expect: compile-error ES0001: forbidden API: IL instruction mkrefany
// Attack on the verifier (issue 10): __makeref / __refvalue (TypedReference).
// Outcome: The IL instructions and TypedReference are refused.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            long x = 1; TypedReference tr = __makeref(x); state.Count = __refvalue(tr, long);
            return state;
        }
    }
}
