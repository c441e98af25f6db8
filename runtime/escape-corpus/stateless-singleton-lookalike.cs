// expect: compile-error ES0002: forbidden construct: static readonly field Escape.Counter.Instance
// Attack on the verifier (issue 10): A static readonly singleton like the compiler's lambda singleton <>9, but with an instance field that counts calls.
// Outcome: A singleton is trusted only when its sealed class has no instance fields at all.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public sealed class Counter { public static readonly Counter Instance = new(); public int Calls; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++Counter.Instance.Calls;
            return state;
        }
    }
}
