// expect: compile-error ES0001: forbidden API: System.Environment.CurrentManagedThreadId
// The thread id (compiler-only: iterators compare it) (local function).
// Environment access; the id may only decide whether an iterator reuses itself. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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
            var seen = state.Count;
            long Leak(object o)
            {

                return System.Environment.CurrentManagedThreadId + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
