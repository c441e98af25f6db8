// expect: compile-error ES0002: forbidden construct: Escape.Carrier.get_StackTrace overrides System.Exception.get_StackTrace
// Issue 22, red team of the override check itself: a tenant's own virtuals may be overridden freely, and a virtual without newslot is
// taken for an override of a tenant virtual when a tenant base declares one of that name. A tenant base that re-declares a refused
// framework member with 'new virtual' would make the derived override look like the tenant's own.
// Outcome: names a framework base is known to have on its refused list stay refused, whatever the tenant declares in between.
// (Conservative: here C# binds the override to Shadow's own StackTrace, and Exception's is untouched; the check does not compare
// signatures through tenant generics, so it refuses rather than guesses.)
using System;
using EventSourcing;

namespace Escape
{
    public class Shadow : Exception
    {
        public new virtual string? StackTrace => null;
    }

    public sealed class Carrier : Shadow
    {
        public override string? StackTrace => "mine";
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = new Carrier().StackTrace ?? "";
            return state;
        }
    }
}
