// expect: compile-error ES0001: forbidden API: System.RuntimeTypeHandle.Value
// The address of a type's method table (iterator).
// RuntimeTypeHandle.Value is a pointer into the runtime: the first step to forging objects. An iterator: the body becomes MoveNext of a generated state machine class.
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

                n = (long)o.GetType().TypeHandle.Value;
            }
            yield return n;
        }
    }
}
