// expect: compile-error unsafe code is not allowed
// Pointer arithmetic.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            unsafe { int x = 1; int* p = &x; state.Count = *(p + 1000); }
            return state;
        }
    }
}
