// expect: compile-error static readonly field Escape.Kept.Set
// Issue 27 red team (i27-redteam), item 6 (a FrozenSet variant of static-readonly-frozen-comparer-create.cs): static readonly sorted/hashed immutable and frozen collections are allowed "when
// the code defines no comparer of its own". Here the tenant defines none: the comparer is the framework's, made by
// EqualityComparer<T>.Create from a lambda that closes over a local int[] (a compiler display class, not a comparer
// type). The FrozenSet built with EqualityComparer<string>.Create(lambdas) is kept for the life of the upload; its comparer
// counts the calls, and a probe key "?k" compares equal only once the count has reached k, so Contains reads it back.
// HOLE if this compiles and state.Count grows over calls with identical input.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public static class Kept
    {
        public static readonly FrozenSet<string> Set = Make();
        static FrozenSet<string> Make()
        {
            var box = new int[1];
            return new[] { "m" }.ToFrozenSet(EqualityComparer<string>.Create((a, b) => Compare(box, a!, b!) == 0, s => 0));
        }

        static int Compare(int[] box, string a, string b)
        {
            if (a.StartsWith('?')) return box[0] >= int.Parse(a.AsSpan(1)) ? 0 : 1;
            if (b.StartsWith('?')) return box[0] >= int.Parse(b.AsSpan(1)) ? 0 : -1;
            if (a == "tick" || b == "tick") { box[0]++; return 1; }
            return string.CompareOrdinal(a, b);
        }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var n = 0;
            while (n < 1000 && Kept.Set.Contains("?" + (n + 1))) n++;
            state.Count = n; // the number of earlier calls
            Kept.Set.Contains("tick");
            return state;
        }
    }
}
