// expect: runtime-isolated
// Issue 12 (shared executors): declare the victim's own type names (test/fixtures/cross-tenant/Victim.cs) in this tenant's
// assembly and use them through the process-wide caches: JsonSerializerOptions.Default (which holds the victim's converter
// for its Victim.Secret once the victim used it), the runtime's record of a failed static initializer (Victim.Broken, gone from the victim in issue 28: an upload whose static initializer throws is no longer loaded), and
// Event.DataAs. If any of them were keyed by name rather than by type (and a type by its load context), the victim's secret
// would come out here.
// Outcome: each load context has its own types; this prints only its own values.
using System.Text.Json;
using EventSourcing;

namespace Victim
{
    public sealed class Secret { public string Value { get; set; } = "prober"; }
    public static class Broken { public static readonly string Value = "prober"; }
}

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Serialize(new Victim.Secret()) + "|" + Victim.Broken.Value + "|" + e.DataAs<Victim.Secret>().Value;
            state.Count++;
            return state;
        }
    }
}
