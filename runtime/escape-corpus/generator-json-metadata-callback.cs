// expect: compile-error ES0001: forbidden API: System.Text.Json.Serialization.Metadata.JsonTypeInfo.OnDeserialized
// Issue 27 (generators), red team: the generated code uses the JSON metadata API, so the IL check allows it; use it from the
// tenant's own code to hang a callback closing over a counter on the context's shared metadata.
// Outcome: the tenant's sources may name metadata types but use none of their members (GeneratorOnlyApis); the context's metadata
// is read-only anyway (the assignment would throw).
using System;
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
            long seen = 0;
            LineContext.Default.Line.OnDeserialized = _ => seen++;
            state.Count = seen;
            return state;
        }
    }
}
