// expect: compile-error System.Activator
// Issue 26 split the verifier's walker: the forbidden call is only in a static field initializer (the compiler's
// .cctor) of a generic type nested in a type the reducer derives nothing from; no method of the reducer names it.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder<T>
    {
        public static readonly object? Made = System.Activator.CreateInstance(typeof(T));
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Holder<EscapeState>.Made?.ToString() ?? "";
            return state;
        }
    }
}
