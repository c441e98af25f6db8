// expect: compile-error error CS8352
// Attack on the verifier (issue 10): A stackalloc span smuggled out of its method inside a ref struct.
// Outcome: C#'s ref-safety rules refuse it at compile time (no unsafe code exists to bypass them).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public ref struct Holder { public Span<long> Span; }
    public static class Escaper { public static Span<long> Out() { Span<long> local = stackalloc long[4]; var h = new Holder { Span = local }; return h.Span; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Escaper.Out()[0];
            return state;
        }
    }
}
