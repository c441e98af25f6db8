// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan
// Constant data from a forged field handle (local function).
// RuntimeHelpers.CreateSpan dereferences the handle: with a made-up address it reads any memory. A capturing local function turned into a delegate: Roslyn puts it in a display class.
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
                var data = System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan<long>(System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                return data[0] + seen;
            }
            System.Func<object, long> leak = Leak;
            state.Count = leak("text");
            return state;
        }

    }
}
