// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal.GetReference
// Attack on the verifier (issue 10): A custom interpolated-string handler whose AppendLiteral writes into the literal it receives.
// Outcome: The handler is tenant code; MemoryMarshal is refused there.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [InterpolatedStringHandler]
    public ref struct Leaky
    {
        public Leaky(int literalLength, int formattedCount) { }
        public void AppendLiteral(string s) { MemoryMarshal.CreateSpan(ref MemoryMarshal.GetReference(s.AsSpan()), s.Length)[0] = (char)88; }
        public void AppendFormatted<T>(T value) { }
    }
    public static class Log { public static void Write(Leaky handler) { } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Log.Write($"pending {state.Count}");
            return state;
        }
    }
}
