// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): A class PrivateImplementationDetails with a copy of the compiler's InlineArrayAsSpan helper, called with a length of 100000.
// Outcome: A helper is trusted only inside the compiler's own top-level <PrivateImplementationDetails> class (a name C# cannot declare) and only with the compiler's exact body.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    internal static class PrivateImplementationDetails
    {
        internal static Span<TElement> InlineArrayAsSpan<TBuffer, TElement>(ref TBuffer buffer, int length) => MemoryMarshal.CreateSpan(ref Unsafe.As<TBuffer, TElement>(ref buffer), length);
    }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            long one = 1; state.Count = PrivateImplementationDetails.InlineArrayAsSpan<long, long>(ref one, 100000)[99999];
            return state;
        }
    }
}
