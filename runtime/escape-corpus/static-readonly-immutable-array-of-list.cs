// expect: compile-error static readonly field
// Issue 27: an ImmutableArray is immutable only when its elements are: one of mutable lists would carry events across calls.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder { public static readonly ImmutableArray<List<string>> Seen = ImmutableArray.Create(new List<string>()); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Holder.Seen[0].Add(e.EventType); state.Count = Holder.Seen[0].Count;
            return state;
        }
    }
}
