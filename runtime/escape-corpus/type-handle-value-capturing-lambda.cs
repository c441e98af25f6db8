// expect: compile-error ES0001: forbidden API: System.RuntimeTypeHandle.Value
// The address of a type's method table (capturing lambda).
// RuntimeTypeHandle.Value is a pointer into the runtime: the first step to forging objects. A lambda capturing a local: Roslyn puts it in a display class.
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

                return (long)o.GetType().TypeHandle.Value;
            };
            state.Count = leak();
            return state;
        }

    }
}
