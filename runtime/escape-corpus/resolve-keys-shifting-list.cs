// expect: runtime-contained
// Issue 27 (IResolveKeys): a list whose Count answers 1 when the host checks it and something else after, and
// whose indexer throws past index 0 or hands out null: the host reads Count once, copies that many keys before
// writing any (a throw midway leaves no half-written array in the response) and refuses a null key.
using System.Collections;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public long Count { get; set; } }

    public sealed class ShiftingKeys : IReadOnlyList<string>
    {
        int _reads;
        public int Count => _reads++ == 0 ? 3 : 1_000_000;
        public string this[int index] => index == 0 ? "first" : index == 1 ? null! : throw new System.InvalidOperationException("gone");
        public IEnumerator<string> GetEnumerator() { yield return "first"; }
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    public sealed class EscapeProjection : IProjection<EscapeState>, IResolveKeys<EscapeState>
    {
        public string? ResolveKey(Event e) => null;
        public IReadOnlyList<string>? ResolveKeys(Event e) => new ShiftingKeys();
        public EscapeState Apply(EscapeState state, Event e) => throw new System.InvalidOperationException("contained");
        public EscapeState Apply(string key, EscapeState state, Event e) => throw new System.InvalidOperationException("contained");
    }
}
