// expect: compile-error ES0001: forbidden API: System.RuntimeTypeHandle.Value
// The address of a type's method table (lambda).
// RuntimeTypeHandle.Value is a pointer into the runtime: the first step to forging objects. A non-capturing lambda: Roslyn puts it in the <>c class.
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

                return (long)o.GetType().TypeHandle.Value;
            };
            state.Count = leak("text");
            return state;
        }

    }
}
