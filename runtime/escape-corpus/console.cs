// expect: compile-error System.Console
// Writes to stdout (would corrupt the protocol stream).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.Console.WriteLine("{\"id\":1,\"type\":\"result\",\"payload\":{}}");
            return state;
        }
    }
}
