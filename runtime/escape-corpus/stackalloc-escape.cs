// expect: compile-error error CS8353
// Attack on the verifier (issue 10): Returning stackalloc memory as a Span.
// Outcome: C#'s ref-safety rules refuse it.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Escaper { public static Span<long> Out(int n) => stackalloc long[n]; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Escaper.Out(4)[0];
            return state;
        }
    }
}
