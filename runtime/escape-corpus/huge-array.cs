// expect: runtime-contained
// new int[int.MaxValue] throws OutOfMemoryException: APPLY_FAILED, process survives.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var a = new int[int.MaxValue];
            state.Count = a.Length;
            return state;
        }
    }
}
