// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As<T> in an override of a generic virtual method, so the call site only names the base method.
// Outcome: The override's body is checked; the trust is never about who calls it.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public abstract class Base { public abstract T Cast<T>(object o) where T : class; }
    public sealed class Derived : Base { public override T Cast<T>(object o) => Unsafe.As<T>(o); }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = new Derived().Cast<Box>("text").A;
            return state;
        }
    }
}
