// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal
// A span of any length through MemoryMarshal.CreateSpan (lambda).
// A 1-element array viewed as 100000 elements: reads and writes of the heap around it. A non-capturing lambda: Roslyn puts it in the <>c class.
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
                var span = System.Runtime.InteropServices.MemoryMarshal.CreateSpan(ref System.Runtime.InteropServices.MemoryMarshal.GetArrayDataReference(new long[1]), 100000);
                return span[99999];
            };
            state.Count = leak("text");
            return state;
        }

    }
}
