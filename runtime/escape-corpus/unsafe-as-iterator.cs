// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Type confusion through Unsafe.As (iterator).
// Reading a string as a Box gives its length and first characters as a number: the start of any read or write. An iterator: the body becomes MoveNext of a generated state machine class.
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
                var box = System.Runtime.CompilerServices.Unsafe.As<Box>(o);
                n = box.A;
            }
            yield return n;
        }
    }
}
