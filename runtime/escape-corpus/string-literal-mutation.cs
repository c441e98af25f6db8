// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal.AsMemory
// Mutating a string literal from a lambda. Literals are interned process-wide: with the old verifier, writing 'X'
// into "pending" changed that literal for every later call, for every tenant's assembly loaded in the same executor,
// and for the next upload too.
using System;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Action mutate = () =>
            {
                var writable = MemoryMarshal.AsMemory("pending".AsMemory());
                writable.Span[0] = 'X';
            };
            mutate();
            state.Value = "pending";
            return state;
        }
    }
}
