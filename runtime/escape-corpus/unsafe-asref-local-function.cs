// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.AsRef
// A writable ref to read-only memory through Unsafe.AsRef (local function).
// Turns the first character of an (interned, process-wide) string into a writable ref. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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
            var seen = state.Count;
            long Leak(object o)
            {
                ref readonly char first = ref ((string)o).GetPinnableReference();
                System.Runtime.CompilerServices.Unsafe.AsRef(in first) = 'X';
                return ((string)o).Length + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
