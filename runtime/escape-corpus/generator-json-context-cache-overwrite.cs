// expect: compile-error ES0002: forbidden construct: Escape.LineContext declares Poison in a JsonSerializerContext
// Issue 27 (generators), red team: the generated context caches each type's metadata in a field of its own (_Line). A method in
// the tenant's partial half could replace it with metadata it built, whose callbacks close over a counter, and every later call
// through LineContext.Default.Line would run them.
// Outcome: the tenant's half of a context may declare no member at all (GeneratedCodePolicy).
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext
    {
        public void Poison() => _Line = null;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            LineContext.Default.Poison();
            state.Value = JsonSerializer.Serialize(new Line(), LineContext.Default.Line);
            return state;
        }
    }
}
