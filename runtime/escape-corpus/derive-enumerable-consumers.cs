// expect: runtime-isolated
// Issue 22, red team of allowed interfaces: an IEnumerable<T> consumed by framework code that rents buffers (string.Join,
// string.Concat, ToArray, ToList, ImmutableArray.CreateRange, new List<T>(…), StringBuilder.AppendJoin). The enumerator records
// everything it is asked and handed; the results are compared with what was yielded.
// Outcome: the consumers only call MoveNext/Current/Dispose; no buffer of theirs reaches tenant code, and what they build holds exactly
// the yielded values, shared or alone.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Text;
using EventSourcing;

namespace Escape
{
    public sealed class Source(int n) : IEnumerable<string>
    {
        public int Calls;
        public IEnumerator<string> GetEnumerator()
        {
            Calls++;
            for (var i = 0; i < n; i++) yield return "own" + i;
        }
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var s = new Source(400);
            var expected = string.Concat(Enumerable.Range(0, 400).Select(i => "own" + i));
            var results = new[]
            {
                string.Join("", s), string.Concat(s), string.Concat(s.ToArray()), string.Concat(s.ToList()),
                string.Concat(ImmutableArray.CreateRange(s)), string.Concat(new List<string>(s)), new StringBuilder().AppendJoin("", s).ToString(),
                string.Concat(s.Select(x => x).ToArray()), string.Concat(s.Where(x => x.Length > 0).ToArray()),
            };
            state.Value = $"calls={s.Calls} same={results.All(r => r == expected)} lengths={string.Join(",", results.Select(r => r.Length).Distinct())}";
            state.Count++;
            return state;
        }
    }
}
