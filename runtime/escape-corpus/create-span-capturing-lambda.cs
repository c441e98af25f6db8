// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan
// Constant data from a forged field handle (capturing lambda).
// RuntimeHelpers.CreateSpan dereferences the handle: with a made-up address it reads any memory. A lambda capturing a local: Roslyn puts it in a display class.
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
                var data = System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan<long>(System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                return data[0];
            };
            state.Count = leak();
            return state;
        }

    }
}
