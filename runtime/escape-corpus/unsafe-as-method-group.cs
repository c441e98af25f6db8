// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As<Box> as a method group (ldftn, cached by the compiler in <>O) called from a lambda.
// Outcome: ldftn of a compiler-only API is refused like a call.
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
            Func<object, Box> cast = Unsafe.As<Box>; Func<long> leak = () => cast("text").A; state.Count = leak();
            return state;
        }
    }
}
