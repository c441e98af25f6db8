// expect: compile-error System.Activator.CreateInstance
// Issue 27: the type's parameter T (index 0) has new(); the method's own U (also index 0) has none. The check must
// read the constraint of the parameter the instantiation names (!!0, the method's), not the type's !0.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal sealed class Box<T> where T : new()
    {
        public static U Make<U>() => System.Activator.CreateInstance<U>();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Box<EscapeState>.Make<string>() ?? "";
            return state;
        }
    }
}
