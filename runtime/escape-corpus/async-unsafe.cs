// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in an async method (the body moves into the state machine's MoveNext).
// Outcome: Both reasons are reported: the API and async itself.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Later { public static async System.Threading.Tasks.Task<long> Leak(object o) => Unsafe.As<Box>(o).A; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = 0;
            return state;
        }
    }
}
