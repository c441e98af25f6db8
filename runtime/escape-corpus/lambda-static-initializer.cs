// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a lambda stored in a static readonly field initialiser.
// Outcome: Refused twice: the API in the lambda, and the static delegate field.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Holder { public static readonly Func<object, long> Leak = o => Unsafe.As<Box>(o).A; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Holder.Leak("text");
            return state;
        }
    }
}
