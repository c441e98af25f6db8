// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.Add
// Out-of-bounds access through Unsafe.Add (lambda).
// Reads far past the end of an array: whatever the heap holds there. A non-capturing lambda: Roslyn puts it in the <>c class.
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
                var array = new long[1];
                var beyond = System.Runtime.CompilerServices.Unsafe.Add(ref array[0], 4096);
                return beyond;
            };
            state.Count = leak("text");
            return state;
        }

    }
}
