// expect: compile-error System.Runtime.CompilerServices.Unsafe.As
// Type confusion through Unsafe.As (no unsafe keyword needed).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            object o = "text";
            var s = System.Runtime.CompilerServices.Unsafe.As<object, EscapeState>(ref o);
            state.Value = s.Value;
            return state;
        }
    }
}
