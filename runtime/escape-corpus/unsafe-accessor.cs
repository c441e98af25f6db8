// expect: compile-error UnsafeAccessor
// [UnsafeAccessor] reaches private members without reflection APIs.
using System.Runtime.CompilerServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "ToString")]
        private static extern string SecretOf(Event e);

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = SecretOf(e) ?? "";
            return state;
        }
    }
}
