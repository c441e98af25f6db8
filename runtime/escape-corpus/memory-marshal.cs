// expect: compile-error System.Runtime.InteropServices.MemoryMarshal
// Reinterprets memory through MemoryMarshal (no unsafe keyword needed).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Span<long> span = stackalloc long[1];
            var bytes = System.Runtime.InteropServices.MemoryMarshal.AsBytes(span);
            state.Count = bytes.Length;
            return state;
        }
    }
}
