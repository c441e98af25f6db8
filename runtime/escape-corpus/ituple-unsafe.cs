// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in an ITuple indexer, reached by a positional pattern on object.
// Outcome: The indexer is the tenant's own code (and [DefaultMember], which Roslyn adds for indexers, is allowed).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public sealed class Tup : ITuple { public int Length => 2; public object? this[int i] => Unsafe.As<Box>((object)"text").A; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            object t = new Tup(); if (t is (long a, long b)) state.Count = a + b;
            return state;
        }
    }
}
