// expect: compile-error explicit struct layout
// Overlapping fields through [StructLayout(LayoutKind.Explicit)] (reinterpreting memory without the unsafe keyword).
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    [StructLayout(LayoutKind.Explicit)]
    public struct Overlay
    {
        [FieldOffset(0)] public long Bits;
        [FieldOffset(0)] public double Number;
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var o = new Overlay { Number = 1.5 };
            state.Count = o.Bits;
            return state;
        }
    }
}
