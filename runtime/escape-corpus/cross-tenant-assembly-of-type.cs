// expect: compile-error System.Type.Assembly
// Issue 12: from a type every tenant shares (the SDK's Event) to its assembly, then to what else the process has loaded.
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
            state.Value = typeof(Event).Assembly.FullName ?? "";
            return state;
        }
    }
}
