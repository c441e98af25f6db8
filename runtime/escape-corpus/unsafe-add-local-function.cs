// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.Add
// Out-of-bounds access through Unsafe.Add (local function).
// Reads far past the end of an array: whatever the heap holds there. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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
                var array = new long[1];
                var beyond = System.Runtime.CompilerServices.Unsafe.Add(ref array[0], 4096);
                return beyond + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
