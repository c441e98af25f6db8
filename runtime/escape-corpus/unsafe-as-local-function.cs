// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Type confusion through Unsafe.As (local function).
// Reading a string as a Box gives its length and first characters as a number: the start of any read or write. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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
                var box = System.Runtime.CompilerServices.Unsafe.As<Box>(o);
                return box.A + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
