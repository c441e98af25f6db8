// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray
// Array initialisation from a forged field handle (capturing lambda).
// RuntimeHelpers.InitializeArray copies from wherever the handle points. A lambda capturing a local: Roslyn puts it in a display class.
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
                var array = new long[4];
                System.Runtime.CompilerServices.RuntimeHelpers.InitializeArray(array, System.RuntimeFieldHandle.FromIntPtr((nint)0x1000 + o.GetHashCode()));
                return array[0];
            };
            state.Count = leak();
            return state;
        }

    }
}
