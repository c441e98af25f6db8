// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): [CompilerGenerated] on a tenant class and method to pose as compiler output.
// Outcome: Nothing is trusted for an attribute or a name.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [CompilerGenerated] public sealed class Trusted { [CompilerGenerated] public static long Leak(object o) => Unsafe.As<Box>(o).A; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Trusted.Leak("text");
            return state;
        }
    }
}
