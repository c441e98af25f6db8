// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan
// Constant data from a forged field handle (iterator).
// RuntimeHelpers.CreateSpan dereferences the handle: with a made-up address it reads any memory. An iterator: the body becomes MoveNext of a generated state machine class.
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
                var data = System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan<long>(System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                n = data[0];
            }
            yield return n;
        }
    }
}
