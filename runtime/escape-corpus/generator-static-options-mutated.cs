// expect: runtime-contained
// Issue 27 (static readonly JsonSerializerOptions), red team: options kept in a static field are one object for every call;
// flip a setting in one call so that the next sees it (and add a converter, and change the naming policy).
// Outcome: the host makes every static readonly JsonSerializerOptions read-only right after the static initialisers ran at
// load (StaticOptionsFreezer), before any call: the first assignment throws InvalidOperationException (APPLY_FAILED).
using System;
using System.Text.Json;
using EventSourcing;

namespace Escape
{
    internal static class Kept
    {
        public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web) { WriteIndented = false };
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Kept.Options.WriteIndented = !Kept.Options.WriteIndented;
            state.Count += Kept.Options.WriteIndented ? 1 : 0;
            return state;
        }
    }
}
