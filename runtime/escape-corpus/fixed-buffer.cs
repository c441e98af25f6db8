// expect: compile-error unsafe code is not allowed
// Attack on the verifier (issue 10): A fixed-size buffer (fixed long Data[4]).
// Outcome: Needs unsafe, which the compiler refuses.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public struct Buf { public fixed long Data[4]; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var b = new Buf();
            return state;
        }
    }
}
