// expect: compile-error ES0001: forbidden API: System.IO.Hashing.XxHash64
// Issue 27 (XxHash), red team: the static one-shot XxHash members are allowed; an instance keeps incremental state (Append)
// and, kept in a static field or reached through one, would carry the bytes of one call into the next call's hash.
// Outcome: only Hash/TryHash/HashToUInt* are allowed on XxHash32/64/128/3 (ApiPolicy); constructing one is refused.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var h = new System.IO.Hashing.XxHash64();
            h.Append(System.Text.Encoding.UTF8.GetBytes(e.EventId));
            state.Value = Convert.ToHexString(h.GetCurrentHash());
            return state;
        }
    }
}
