// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.MemoryMarshal.GetReference
// Mutating a string literal from an iterator: a writable span over the literal's characters.
using System.Collections.Generic;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            foreach (var n in Mutate()) state.Count = n;
            state.Value = "pending";
            return state;
        }

        static IEnumerable<int> Mutate()
        {
            {
                var chars = MemoryMarshal.CreateSpan(ref MemoryMarshal.GetReference("pending".AsSpan()), 7);
                chars[0] = 'X';
            }
            yield return 1;
        }
    }
}
