// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a C# 14 extension property (extension block).
// Outcome: The skeleton types Roslyn adds for extension blocks throw; the implementation method is checked like any other.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Leaks { extension(object o) { public long Raw => Unsafe.As<Box>(o).A; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ((object)e.EventId).Raw;
            return state;
        }
    }
}
