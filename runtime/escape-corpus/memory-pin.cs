// expect: compile-error ES0001: forbidden API: System.ReadOnlyMemory.Pin
// Pinning hands out the address of a string literal's characters (and leaks a pinned handle if not disposed).
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Func<ReadOnlyMemory<char>, int> pin = m => { var handle = m.Pin(); return 1; };
            state.Count = pin("pending".AsMemory());
            return state;
        }
    }
}
