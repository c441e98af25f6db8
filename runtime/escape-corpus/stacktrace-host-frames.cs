// expect: compile-error System.Diagnostics.StackTrace
// Issue 27 (errors that point at the line): a failure now lists the tenant's own frames, read by the host from the
// exception's captured trace and filtered to the tenant's load context. Attack: walk the live stack from inside Apply
// and put the host's frames (its types, methods, call structure) into the state, where the tenant can read them.
// Outcome: System.Diagnostics.StackTrace/StackFrame are not in the allowlist; only the host builds frames, and only
// the tenant's own leave it.
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var frames = new System.Diagnostics.StackTrace(fNeedFileInfo: true).GetFrames();
            state.Value = string.Join("|", frames.Select(f => f.GetMethod()?.DeclaringType?.FullName));
            return state;
        }
    }
}
