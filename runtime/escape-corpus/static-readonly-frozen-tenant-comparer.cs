// expect: compile-error static readonly field
// Issue 27: a FrozenSet keeps its comparer and calls it on every lookup; the tenant's own comparer (a counter in it) would carry state across calls, so keyed immutable collections are static readonly only when the code defines no comparer.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal sealed class Counting : IEqualityComparer<string>
    {
        public long Calls;
        public bool Equals(string? x, string? y) { Calls++; return x == y; }
        public int GetHashCode(string s) { Calls++; return s.Length; }
    }

    internal static class Holder { public static readonly FrozenSet<string> Known = new[] { "x" }.ToFrozenSet(new Counting()); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = Holder.Known.Contains(e.EventType); state.Count = ((Counting)Holder.Known.Comparer).Calls;
            return state;
        }
    }
}
