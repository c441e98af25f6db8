// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a LINQ query expression's let clause (a lambda in a generated class).
// Outcome: The query's lambdas are checked like tenant code.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var q = from s in new[] { "a", "b" } let raw = Unsafe.As<Box>((object)s).A select raw; foreach (var n in q) state.Count += n;
            return state;
        }
    }
}
