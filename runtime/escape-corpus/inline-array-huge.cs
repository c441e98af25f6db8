// expect: runtime-contained
// Attack on the verifier (issue 10): An inline array of 2^27 longs (1 GiB), written at its last element.
// Outcome: The runtime refuses to load the type (TypeLoadException: too large): APPLY_FAILED.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [InlineArray(0x7FFFFFF)] public struct Huge { private long _e; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var b = new Huge(); b[0x7FFFFFE] = 42; state.Count = b[0x7FFFFFE];
            return state;
        }
    }
}
