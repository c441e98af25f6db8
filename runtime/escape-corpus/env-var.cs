// expect: compile-error System.Environment.GetEnvironmentVariable
// Reads an environment variable (secrets).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.Environment.GetEnvironmentVariable("DATABASE_URL") ?? "";
            return state;
        }
    }
}
