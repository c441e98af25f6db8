// expect: compile-error ImmutableCollectionsMarshal.AsArray
// Issue 27: static readonly ImmutableArray<int> is allowed; the array behind it is reachable only through ImmutableCollectionsMarshal.AsArray, refused.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder { public static readonly ImmutableArray<long> Seen = ImmutableArray.Create(0L); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var a = System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsArray(Holder.Seen)!; a[0]++; state.Count = a[0];
            return state;
        }
    }
}
