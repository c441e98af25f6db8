// expect: compile-error ES0002: forbidden construct: Escape.Spy implements System.Collections.Generic.IAlternateEqualityComparer<T1,T2>
// Issue 22, red team: comparers are allowed (they get the tenant's own keys), but a comparer that also implements
// IAlternateEqualityComparer<ReadOnlySpan<char>, string> is called by Dictionary/HashSet alternate lookups with spans: over the
// caller's buffers, which in framework code (and the host's) may be slices of rented arrays.
// Outcome: IAlternateEqualityComparer is not on the derivation list (IEqualityComparer<T> is).
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : IEqualityComparer<string>, IAlternateEqualityComparer<ReadOnlySpan<char>, string>
    {
        public string Seen = "";
        public bool Equals(string? x, string? y) => x == y;
        public int GetHashCode(string obj) => 0;
        public bool Equals(ReadOnlySpan<char> alternate, string other) { Seen += alternate.ToString(); return false; }
        public int GetHashCode(ReadOnlySpan<char> alternate) => 0;
        public string Create(ReadOnlySpan<char> alternate) => alternate.ToString();
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var spy = new Spy();
            var set = new HashSet<string>(spy) { "a" };
            _ = set.GetAlternateLookup<ReadOnlySpan<char>>().Contains(e.EventId.AsSpan());
            state.Value = spy.Seen;
            return state;
        }
    }
}
