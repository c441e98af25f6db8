// expect: compile-error System.AppDomain.CurrentDomain
// Issue 12: list every assembly in the shared executor, other tenants' included.
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
            foreach (var a in AppDomain.CurrentDomain.GetAssemblies()) state.Value += a.FullName;
            return state;
        }
    }
}
