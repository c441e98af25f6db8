// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsArray
// Attack on the verifier (issue 10): The array behind ImmutableArray<int>.Empty (shared by the whole process).
// Outcome: AsImmutableArray (used by collection expressions) is allowed; AsArray is refused.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;
using System.Collections.Immutable;
namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var shared = ImmutableCollectionsMarshal.AsArray(ImmutableArray<int>.Empty); state.Count = shared!.Length;
            return state;
        }
    }
}
