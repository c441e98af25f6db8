// expect: compile-error ES0002: forbidden construct: mutable field Escape.Carrier.Count in an exception type
// Red team (issue 10): the same kept exception, thrown by the tenant itself from a static initializer: its own mutable
// field would be state shared by every later call.
// Outcome: exception types may only have readonly fields of primitive-like types (or exceptions).
using EventSourcing;

namespace Escape
{
    public sealed class Carrier : System.Exception { public int Count; }
    public static class Broken
    {
        public static readonly int V = Fail();
        static int Fail() => throw new Carrier();
    }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try
            {
                state.Count = Broken.V;
            }
            catch (System.TypeInitializationException ex) when (ex.InnerException is Carrier c)
            {
                state.Count = ++c.Count;
            }
            return state;
        }
    }
}
