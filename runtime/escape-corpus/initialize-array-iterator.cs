// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray
// Array initialisation from a forged field handle (iterator).
// RuntimeHelpers.InitializeArray copies from wherever the handle points. An iterator: the body becomes MoveNext of a generated state machine class.
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
                var array = new long[4];
                System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray(array, System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                n = array[0];
            }
            yield return n;
        }
    }
}
