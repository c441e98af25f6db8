// expect: compile-error static readonly field
// A static readonly list is still shared mutable state.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private static readonly System.Collections.Generic.List<string> Seen = new();

        public EscapeState Apply(EscapeState state, Event e)
        {
            Seen.Add(e.EventId);
            state.Count = Seen.Count;
            return state;
        }
    }
}
