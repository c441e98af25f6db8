// expect: compile-error ES0001: forbidden API: System.Environment.CurrentManagedThreadId
// The thread id (compiler-only: iterators compare it) (capturing lambda).
// Environment access; the id may only decide whether an iterator reuses itself. A lambda capturing a local: Roslyn puts it in a display class.
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
            object o = e.EventId;
            System.Func<long> leak = () =>
            {

                return System.Environment.CurrentManagedThreadId;
            };
            state.Count = leak();
            return state;
        }

    }
}
