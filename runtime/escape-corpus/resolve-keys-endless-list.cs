// expect: runtime-contained
// Issue 27 (IResolveKeys): the host reads the keys through the tenant's own IReadOnlyList. Its Count claims
// int.MaxValue and its indexer never returns: the host must check Count against its 1,024-key cap before it
// reads one element (RESOLVE_FAILED), and a list that then loops is still stopped at the deadline.
using System.Collections;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public long Count { get; set; } }

    public sealed class EndlessKeys : IReadOnlyList<string>
    {
        public int Count => int.MaxValue;
        public string this[int index] { get { while (true) { } } }
        public IEnumerator<string> GetEnumerator() { while (true) yield return "k"; }
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    public sealed class EscapeProjection : IProjection<EscapeState>, IResolveKeys<EscapeState>
    {
        public string? ResolveKey(Event e) => null;
        public IReadOnlyList<string>? ResolveKeys(Event e) => new EndlessKeys();
        public EscapeState Apply(EscapeState state, Event e) { while (true) { } }
        public EscapeState Apply(string key, EscapeState state, Event e) { while (true) { } }
    }
}
