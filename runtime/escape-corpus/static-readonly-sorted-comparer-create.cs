// expect: compile-error static readonly field
// Issue 27: Comparer<T>.Create over a lambda whose closure holds an array: kept in a static ImmutableSortedSet, it would count lookups across calls.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder
    {
        public static readonly ImmutableSortedSet<string> Known = Make();
        static ImmutableSortedSet<string> Make()
        {
            var box = new long[1];
            return ImmutableSortedSet.Create(Comparer<string>.Create((a, b) => (int)(box[0]++ * 0) + string.CompareOrdinal(a, b)), "x", "y");
        }
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = Holder.Known.Contains(e.EventType); state.Count = Holder.Known.KeyComparer.Compare("", "");
            return state;
        }
    }
}
