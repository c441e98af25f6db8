// expect: compile-error unsafe code is not allowed
// Pointer-typed members (Buffer.MemoryCopy, string(char*), MemoryHandle.Pointer…) need pointers, which need
// `unsafe`, which the compiler refuses; the IL check refuses any pointer-typed member besides the compiler's
// own Span(void*, int) for stackalloc and constant data.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Action copy = () => System.Buffer.MemoryCopy(null, null, 8, 8);
            copy();
            return state;
        }
    }
}
