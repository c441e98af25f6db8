// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.AsRef
// A writable ref to read-only memory through Unsafe.AsRef (iterator).
// Turns the first character of an (interned, process-wide) string into a writable ref. An iterator: the body becomes MoveNext of a generated state machine class.
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
            foreach (var n in Leak("text")) state.Count = n;
            return state;
        }

        static IEnumerable<long> Leak(object o)
        {
            long n;
            {
                ref readonly char first = ref ((string)o).GetPinnableReference();
                System.Runtime.CompilerServices.Unsafe.AsRef(in first) = 'X';
                n = ((string)o).Length;
            }
            yield return n;
        }
    }
}
