// expect: compile-error ES0002: forbidden construct: [InlineArray] with an explicit size
// Attack on the verifier (issue 10): An inline array of 64 longs whose struct is declared 8 bytes long ([StructLayout(Size = 8)]): the compiler would index 64 elements.
// Outcome: The runtime refuses such a type (TypeLoadException); the IL check refuses it first rather than relying on that.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [InlineArray(64)] [StructLayout(LayoutKind.Sequential, Size = 8)] public struct Small { private long _e; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var b = new Small(); b[63] = 42; state.Count = b[63];
            return state;
        }
    }
}
