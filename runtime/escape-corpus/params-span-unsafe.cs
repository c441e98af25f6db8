// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal.CreateSpan
// Attack on the verifier (issue 10): Widening a params Span (backed by the compiler's stack inline array) with MemoryMarshal.CreateSpan.
// Outcome: Only the compiler's exact inline-array helpers may use MemoryMarshal.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Spans { public static long Wide(params Span<long> xs) => MemoryMarshal.CreateSpan(ref xs[0], 1 << 20)[(1 << 20) - 1]; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Spans.Wide(1, 2, 3);
            return state;
        }
    }
}
