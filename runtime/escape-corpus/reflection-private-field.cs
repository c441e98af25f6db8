// expect: compile-error System.Type.GetField
// Reads a private field with reflection (BindingFlags.NonPublic).
using System.Reflection;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var f = typeof(Event).GetField("_secret", BindingFlags.NonPublic | BindingFlags.Instance);
            state.Value = f?.GetValue(e)?.ToString() ?? "";
            return state;
        }
    }
}
