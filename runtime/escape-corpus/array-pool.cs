// expect: compile-error System.Buffers.ArrayPool
// Shared pools leak data across calls.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var a = System.Buffers.ArrayPool<byte>.Shared.Rent(16);
            return state;
        }
    }
}
