// expect: compile-error System.Type.GetType
// Looks a type up by name to reach System.IO.File.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var t = System.Type.GetType("System.IO.File");
            state.Value = t?.FullName ?? "";
            return state;
        }
    }
}
