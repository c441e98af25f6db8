// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.Add
// Out-of-bounds access through Unsafe.Add (capturing lambda).
// Reads far past the end of an array: whatever the heap holds there. A lambda capturing a local: Roslyn puts it in a display class.
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
            object o = e.EventId;
            System.Func<long> leak = () =>
            {
                var array = new long[1];
                var beyond = System.Runtime.CompilerServices.Unsafe.Add(ref array[0], 4096);
                return beyond;
            };
            state.Count = leak();
            return state;
        }

    }
}
