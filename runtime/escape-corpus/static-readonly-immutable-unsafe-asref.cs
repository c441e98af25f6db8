// expect: compile-error System.Runtime.CompilerServices.Unsafe
// Issue 27: a static readonly ImmutableArray cannot be reassigned after load; Unsafe.AsRef(in field) would, and is compiler-only.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder { public static readonly ImmutableArray<string> Seen = ImmutableArray<string>.Empty; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Runtime.CompilerServices.Unsafe.AsRef(in Holder.Seen) = Holder.Seen.Add(e.EventType); state.Count = Holder.Seen.Length;
            return state;
        }
    }
}
