// expect: compile-error ES0001: forbidden API: System.Environment.CurrentManagedThreadId
// The thread id (compiler-only: iterators compare it) (iterator).
// Environment access; the id may only decide whether an iterator reuses itself. An iterator: the body becomes MoveNext of a generated state machine class.
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
            foreach (var n in Leak("text")) state.Count = n;
            return state;
        }

        static IEnumerable<long> Leak(object o)
        {
            long n;
            {

                n = System.Environment.CurrentManagedThreadId;
            }
            yield return n;
        }
    }
}
