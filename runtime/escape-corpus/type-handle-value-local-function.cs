// expect: compile-error ES0001: forbidden API: System.RuntimeTypeHandle.Value
// The address of a type's method table (local function).
// RuntimeTypeHandle.Value is a pointer into the runtime: the first step to forging objects. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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

                return (long)o.GetType().TypeHandle.Value + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
