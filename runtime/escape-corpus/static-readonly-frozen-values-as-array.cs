// expect: compile-error ImmutableCollectionsMarshal.AsArray
// Issue 27: a FrozenDictionary's Values is an ImmutableArray; writing into it (to count calls) needs AsArray, refused.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder { public static readonly FrozenDictionary<string, long> Seen = new Dictionary<string, long> { ["n"] = 0 }.ToFrozenDictionary(); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var a = System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsArray(Holder.Seen.Values)!; a[0]++; state.Count = a[0];
            return state;
        }
    }
}
