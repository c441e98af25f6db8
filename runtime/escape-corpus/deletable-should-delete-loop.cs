// expect: runtime-contained
// Issue 27, item 8 (deletion): ShouldDelete is tenant code the host calls after every Apply of an IDeletableProjection;
// one that never returns is stopped at the call's deadline like a looping Apply (and its ResolveKey likewise).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public long Count { get; set; } }

    public sealed class EscapeProjection : IProjection<EscapeState>, IDeletableProjection<EscapeState>
    {
        public string? ResolveKey(Event e) { while (true) { } }
        public EscapeState Apply(EscapeState state, Event e) { state.Count++; return state; }
        public bool ShouldDelete(EscapeState state, Event e) { while (true) { } }
    }
}
