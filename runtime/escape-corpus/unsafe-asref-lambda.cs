// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.AsRef
// A writable ref to read-only memory through Unsafe.AsRef (lambda).
// Turns the first character of an (interned, process-wide) string into a writable ref. A non-capturing lambda: Roslyn puts it in the <>c class.
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Func<object, long> leak = o =>
            {
                ref readonly char first = ref ((string)o).GetPinnableReference();
                System.Runtime.CompilerServices.Unsafe.AsRef(in first) = 'X';
                return ((string)o).Length;
            };
            state.Count = leak("text");
            return state;
        }

    }
}
