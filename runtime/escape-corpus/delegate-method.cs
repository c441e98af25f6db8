// expect: compile-error ES0001: forbidden API: System.Delegate.Method
// Attack on the verifier (issue 10): Delegate.Method (a MethodInfo of a lambda) from a local function.
// Outcome: Delegate.Method/Target/DynamicInvoke/CreateDelegate are refused wherever they are used.
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
            Func<long> f = () => 1; long Local() => f.Method.Name.Length; state.Count = Local();
            return state;
        }
    }
}
