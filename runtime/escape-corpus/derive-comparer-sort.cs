// expect: runtime-isolated
// Issue 22, red team of allowed bases and interfaces: comparers handed values by sorting. Array.Sort, List.Sort, Span.Sort, OrderBy/
// ThenBy (which compute keys into arrays of their own), Order, SortedSet, MinBy/MaxBy, BinarySearch: every value a Comparer<T>, an
// IComparer<T>, an IComparable<T> and an IEqualityComparer<T> is ever handed is recorded.
// Outcome: sorts only compare elements inside the range being sorted; every value is one the tenant supplied, shared or alone.
using System;
using System.Collections.Generic;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class Recorder
    {
        public readonly SortedSet<string> Seen = new(StringComparer.Ordinal);
        public void See(string? s) => Seen.Add(s ?? "<null>");
    }

    public sealed class Spy(Recorder r) : Comparer<string>
    {
        public override int Compare(string? x, string? y) { r.See(x); r.See(y); return string.CompareOrdinal(x, y); }
    }

    public sealed class Plain(Recorder r) : IComparer<string>, IEqualityComparer<string>
    {
        public int Compare(string? x, string? y) { r.See(x); r.See(y); return string.CompareOrdinal(x, y); }
        public bool Equals(string? x, string? y) { r.See(x); r.See(y); return x == y; }
        public int GetHashCode(string s) { r.See(s); return s.Length; }
    }

    public sealed class Item(Recorder r, string name) : IComparable<Item>
    {
        public string Name => name;
        public int CompareTo(Item? other) { r.See(name); r.See(other?.Name); return string.CompareOrdinal(name, other?.Name); }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        static bool Own(string s)
        {
            var digits = s.StartsWith("own", StringComparison.Ordinal) ? s[3..] : s;
            return digits.Length == 3 && digits.All(char.IsDigit);
        }

        public EscapeState Apply(EscapeState state, Event e)
        {
            var r = new Recorder();
            var words = Enumerable.Range(0, 300).Select(i => "own" + ((i * 7919) % 300).ToString("D3")).ToArray();
            Array.Sort((string[])words.Clone(), new Spy(r));
            words.ToList().Sort(new Plain(r));
            ((string[])words.Clone()).AsSpan().Sort(new Spy(r));
            _ = words.OrderBy(w => w, new Spy(r)).ThenBy(w => w.Length).ToArray();
            _ = words.OrderByDescending(w => w[3..], new Plain(r)).Take(5).ToList();
            _ = words.Order(new Spy(r)).Skip(10).First();
            _ = new SortedSet<string>(words, new Spy(r)).Count;
            _ = words.MinBy(w => w, new Plain(r));
            _ = words.Distinct(new Plain(r)).Count();
            _ = words.ToHashSet(new Plain(r)).Count;
            _ = Array.BinarySearch(words.Order(StringComparer.Ordinal).ToArray(), "own150", new Spy(r));
            _ = words.Select(w => new Item(r, w)).Order().ToArray();
            // Its own values: "own000".."own299" and the keys "000".."299" it sorted by; anything else would be someone else's.
            state.Value = r.Seen.Count + ":" + string.Join(",", r.Seen.Where(s => !Own(s)));
            state.Count++;
            return state;
        }
    }
}
