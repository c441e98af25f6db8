// expect: compile-error System.Activator.CreateInstance
// Issue 27: a nested type redeclares its outer type's parameters: Inner's !0 is Outer's T (new()), its !1 is U (none).
// Creating U by hand through the trusted call must be refused.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal sealed class Outer<T> where T : new()
    {
        public sealed class Inner<U>
        {
            public T Fine() => new T();
            public U Forged() => System.Activator.CreateInstance<U>();
        }
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = new Outer<EscapeState>.Inner<string>().Forged() ?? "";
            return state;
        }
    }
}
