// expect: compile-error readonly field of a mutable type Escape.Spy._opts in a JSON converter
// Issue 27 red team (i27-redteam), item 2: JsonSerializerOptions is on the list of "primitive-like" types a static readonly
// field may hold because the host freezes static options after the static initializers (StaticOptionsFreezer). A kept
// converter's readonly instance fields are held to the same list, but nothing freezes an instance field: the converter
// (kept by the generated context's static Default for the life of the upload) holds options that are never used to
// serialize, so they never become read-only. Each call bumps MaxDepth: a counter across calls (and Converters.Add would
// grow memory nobody is charged for).
// HOLE if this compiles and state.Count grows over calls with identical input.
using System;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    public sealed class Spy : JsonConverter<Line>
    {
        readonly JsonSerializerOptions _opts = new JsonSerializerOptions { MaxDepth = 1 };

        public override Line Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) { reader.Skip(); return new Line(); }

        public override void Write(Utf8JsonWriter writer, Line value, JsonSerializerOptions options)
        {
            var seen = _opts.MaxDepth;
            _opts.MaxDepth = seen + 1;
            writer.WriteNumberValue(seen - 1);
        }
    }

    [JsonSourceGenerationOptions(Converters = new[] { typeof(Spy) })]
    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Serialize(new Line(), LineContext.Default.Line);
            state.Count = long.Parse(state.Value);
            return state;
        }
    }
}
