// expect: compile-error ES0001: forbidden API: System.RuntimeFieldHandle.Value
// Runtime field handles are addresses; none of their members is available.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Func<RuntimeFieldHandle, long> address = h => (long)h.Value;
            state.Count = address(RuntimeFieldHandle.FromIntPtr(16));
            return state;
        }
    }
}
