// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan
// Constant data from a forged field handle (lambda).
// RuntimeHelpers.CreateSpan dereferences the handle: with a made-up address it reads any memory. A non-capturing lambda: Roslyn puts it in the <>c class.
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
                var data = System.Runtime.CompilerServices.RuntimeHelpers.CreateSpan<long>(System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                return data[0];
            };
            state.Count = leak("text");
            return state;
        }

    }
}
