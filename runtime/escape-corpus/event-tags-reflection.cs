// expect: compile-error System.Type.GetField
// Issue 28: reach the private field behind Event.Tags (or the ImmutableArray's own array) with reflection and swap it.
// Outcome: reflection is refused at compile time, as everywhere.
using System.Reflection;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var field = typeof(Event).GetField("_tags", BindingFlags.NonPublic | BindingFlags.Instance);
            field?.SetValue(e, new System.Collections.Generic.List<string> { "forged" });
            state.Value = string.Join("|", e.Tags);
            return state;
        }
    }
}
