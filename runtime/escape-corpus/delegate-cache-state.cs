// expect: compile-error ES0002: forbidden construct: static mutable field Escape.Cache._f
// Attack on the verifier (issue 10): A tenant field shaped like the compiler's lambda cache, also read to learn whether an earlier call filled it (one bit of state across calls).
// Outcome: A delegate cache is trusted only when it is read nowhere but inside its own fill sequence.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Cache { static Func<int>? _f; static int One() => 1; public static bool First() { var first = _f is null; _f ??= new Func<int>(One); return first; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Cache.First() ? 1 : 0;
            return state;
        }
    }
}
