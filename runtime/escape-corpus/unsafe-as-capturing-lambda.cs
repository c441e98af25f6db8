// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Type confusion through Unsafe.As (capturing lambda).
// Reading a string as a Box gives its length and first characters as a number: the start of any read or write. A lambda capturing a local: Roslyn puts it in a display class.
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
                var box = System.Runtime.CompilerServices.Unsafe.As<Box>(o);
                return box.A;
            };
            state.Count = leak();
            return state;
        }

    }
}
