// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a default interface method body (code in an interface, called through the interface).
// Outcome: The IL check reads every method body; interfaces are tenant code like any class.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public interface ILeak { long Leak(object o) => Unsafe.As<Box>(o).A; }
    public sealed class Leaker : ILeak { }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ((ILeak)new Leaker()).Leak("text");
            return state;
        }
    }
}
