// expect: compile-error System.Random
// Issue 27: new T() is allowed under `where T : new()` (Activator.CreateInstance<T>()); the T it creates is still
// checked wherever the instantiation is written, so a refused type cannot be made through it.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Factory
    {
        public static T Make<T>() where T : new() => new T();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Factory.Make<System.Random>().Next();
            return state;
        }
    }
}
