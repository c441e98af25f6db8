// expect: compile-error ES0001: forbidden API: System.AppContext.GetData
// Issue 27 (generators), red team: generated regex runners read the host's default match timeout with AppContext.GetData, so
// the IL check allows that one member; read the host's AppContext switches from the tenant's own code.
// Outcome: refused in the tenant's own sources (GeneratorOnlyApis).
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = AppContext.GetData("REGEX_DEFAULT_MATCH_TIMEOUT")?.ToString() ?? "";
            return state;
        }
    }
}
