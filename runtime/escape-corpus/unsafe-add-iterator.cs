// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.Add
// Out-of-bounds access through Unsafe.Add (iterator).
// Reads far past the end of an array: whatever the heap holds there. An iterator: the body becomes MoveNext of a generated state machine class.
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
                var array = new long[1];
                var beyond = System.Runtime.CompilerServices.Unsafe.Add(ref array[0], 4096);
                n = beyond;
            }
            yield return n;
        }
    }
}
