// expect: compile-error ES0002: forbidden construct: Escape.Spy.CopyTo reads or passes on the array it is given
// Issue 22, red team: ICollection<T>.CopyTo(T[] array, int index) is called by framework code with an array it allocated or rented
// (Enumerable.ToArray, List<T>.AddRange/InsertRange, collection constructors, string.Join/Concat over a collection): a CopyTo that
// reads the array (or keeps it) sees what a pooled array held before. Roslyn itself implements ICollection<T> for collection
// expressions (IEnumerable<T> x = [a, b]), so the interface is allowed, but only with a CopyTo that writes.
// Outcome: every CopyTo of a collection type must be one of the write-only shapes Roslyn emits.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : ICollection<string>
    {
        public readonly List<string> Seen = new();
        public int Count => 64;
        public bool IsReadOnly => true;
        public void Add(string item) { }
        public void Clear() { }
        public bool Contains(string item) => false;
        public void CopyTo(string[] array, int arrayIndex)
        {
            foreach (var s in array) if (s is not null) Seen.Add(s); // what the framework's array held
        }
        public bool Remove(string item) => false;
        public IEnumerator<string> GetEnumerator() { yield break; }
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var spy = new Spy();
            _ = spy.ToArray();
            new List<string>().AddRange(spy);
            state.Value = string.Join(",", spy.Seen);
            return state;
        }
    }
}
