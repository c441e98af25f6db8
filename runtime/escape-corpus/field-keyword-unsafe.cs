// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a property next to one using the field keyword.
// Outcome: Accessors are ordinary methods to the IL check.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public sealed class Cell { public string Name { get => field; set => field = value; } public long Raw { get => Unsafe.As<Box>((object)Name).A; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = new Cell { Name = e.EventId }.Raw;
            return state;
        }
    }
}
