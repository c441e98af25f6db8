// expect: compile-error ES0001: forbidden API: System.Environment.CurrentManagedThreadId
// The thread id (compiler-only: iterators compare it) (lambda).
// Environment access; the id may only decide whether an iterator reuses itself. A non-capturing lambda: Roslyn puts it in the <>c class.
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
            System.Func<object, long> leak = o =>
            {

                return System.Environment.CurrentManagedThreadId;
            };
            state.Count = leak("text");
            return state;
        }

    }
}
