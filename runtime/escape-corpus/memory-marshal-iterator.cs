// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal
// A span of any length through MemoryMarshal.CreateSpan (iterator).
// A 1-element array viewed as 100000 elements: reads and writes of the heap around it. An iterator: the body becomes MoveNext of a generated state machine class.
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
                var span = System.Runtime.InteropServices.MemoryMarshal.CreateSpan(ref System.Runtime.InteropServices.MemoryMarshal.GetArrayDataReference(new long[1]), 100000);
                n = span[99999];
            }
            yield return n;
        }
    }
}
