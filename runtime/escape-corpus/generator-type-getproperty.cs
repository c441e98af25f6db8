// expect: compile-error ES0001: forbidden API: System.Type.GetProperty
// Issue 27 (generators), red team: the JSON generator's output names each property's attributes with typeof(T).GetProperty(...),
// so the IL check allows Type.GetProperty/GetConstructor/GetField; use them from the tenant's own code to reach a PropertyInfo.
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
            state.Value = typeof(EscapeState).GetProperty("Value")?.ToString() ?? "";
            return state;
        }
    }
}
