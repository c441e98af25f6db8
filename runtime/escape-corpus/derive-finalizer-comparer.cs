// expect: compile-error ES0002: forbidden construct: finalizer on Escape.Spy
// Issue 22, red team: a finalizer on an allowed base (Comparer<T>): Object.Finalize is on no derivation list, and finalizers run on the
// GC's thread between other tenants' calls.
// Outcome: refused as a finalizer, whatever the base.
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : Comparer<string>
    {
        public override int Compare(string? x, string? y) => string.CompareOrdinal(x, y);
        ~Spy() { _ = Compare("a", "b"); }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var list = new List<string> { e.EventId, "b" };
            list.Sort(new Spy());
            return state;
        }
    }
}
