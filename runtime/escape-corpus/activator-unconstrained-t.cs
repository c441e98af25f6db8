// expect: compile-error System.Activator.CreateInstance
// Issue 27: only the compiler's lowering of new T() is trusted. Activator.CreateInstance<T>() written by hand for a T
// without the new() constraint would create types without a public parameterless constructor: refused.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Factory
    {
        public static T Make<T>() => System.Activator.CreateInstance<T>();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Factory.Make<string>() ?? "";
            return state;
        }
    }
}
