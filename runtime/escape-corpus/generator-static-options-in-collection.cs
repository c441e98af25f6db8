// expect: compile-error static readonly field Escape.Kept.All
// Issue 27 (static readonly JsonSerializerOptions), red team: the host freezes a static readonly field's own options, not
// options inside a collection: keep them in an ImmutableArray so that they stay writable.
// Outcome: JsonSerializerOptions counts only as the field's own type, never as an element (AssemblyWalker.IsJsonOptionsField).
using System;
using System.Collections.Immutable;
using System.Text.Json;
using EventSourcing;

namespace Escape
{
    internal static class Kept
    {
        public static readonly ImmutableArray<JsonSerializerOptions> All = ImmutableArray.Create(new JsonSerializerOptions());
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Kept.All[0].WriteIndented = !Kept.All[0].WriteIndented;
            state.Count += Kept.All[0].WriteIndented ? 1 : 0;
            return state;
        }
    }
}
