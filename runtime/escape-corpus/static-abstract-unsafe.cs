// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As and MemoryMarshal behind static abstract / static virtual interface members, reached through a constrained generic call.
// Outcome: Each implementation is a method of the tenant's own types: checked like any other.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public interface ILeak { static abstract long Leak(object o); static virtual long Twice(object o) => Unsafe.As<Box>(o).A * 2; }
    public struct Leaker : ILeak { public static long Leak(object o) => MemoryMarshal.GetArrayDataReference(new long[1]); }
    public static class Use { public static long Run<T>(object o) where T : ILeak => T.Leak(o) + T.Twice(o); }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Use.Run<Leaker>("text");
            return state;
        }
    }
}
