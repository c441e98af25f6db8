// expect: compile-error assembly loading is not allowed
// Issue 12: enumerate the load contexts of the shared executor (one per tenant upload) to reach another tenant's assembly.
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
            foreach (var ctx in System.Runtime.Loader.AssemblyLoadContext.All) state.Value += ctx.Name;
            return state;
        }
    }
}
