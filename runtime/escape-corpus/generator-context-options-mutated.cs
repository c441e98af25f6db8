// expect: runtime-contained
// Issue 27 (generators), red team: the generated context's static Default is one object for every call; change its options
// in one call so that the next call serializes differently.
// Outcome: a context's options are read-only once bound to it (System.Text.Json binds them in the context's constructor, and
// the host freezes the generator's static s_defaultOptions at load): the assignment throws (APPLY_FAILED).
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            LineContext.Default.Options.WriteIndented = !LineContext.Default.Options.WriteIndented;
            state.Value = JsonSerializer.Serialize(new Line(), LineContext.Default.Line);
            return state;
        }
    }
}
