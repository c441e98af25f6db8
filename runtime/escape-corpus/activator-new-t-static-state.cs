// expect: compile-error static mutable field
// Issue 27: new T() runs T's constructor on every call; a constructor that counts in a static field (to carry state
// from one call, or tenant, to the next) is refused as any static mutable field is.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class Counting
    {
        public static long Made;
        public Counting() { Made++; }
    }

    internal static class Factory
    {
        public static T Make<T>() where T : new() => new T();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = Factory.Make<Counting>();
            state.Count = Counting.Made;
            return state;
        }
    }
}
