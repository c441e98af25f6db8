// expect: runtime-isolated
// Issue 28 (sec-typeinit), attacking the backstop: the tenant throws a TypeInitializationException of its own inside a
// call (no type initializer failed). The host cannot tell it from the runtime's, so it takes it for a kept exception and
// loads the upload again, from its image, before its next call (AssemblyRegistry.Enter). What that costs falls on the
// tenant's own next call (one load: its own static initializers again), not on a neighbour's.
// Outcome: runs (runtime-isolated: beside the victim it sees nothing of it); the output of identical calls is identical (TypeInitializerTests.ATypeInitializationExceptionInACall…).
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        static readonly string Table = new string('t', 1000);

        public EscapeState Apply(EscapeState state, Event e)
        {
            try { throw new TypeInitializationException("Escape.Nothing", new InvalidOperationException("mine")); }
            catch (TypeInitializationException t) { state.Value = t.InnerException!.Message + Table.Length; }
            state.Count++;
            return state;
        }
    }
}
