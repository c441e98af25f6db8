// expect: compile-error mutable field Escape.RelayConverter._last in a JSON converter
// Issue 12: JsonSerializerOptions.Default is one object for the whole process, and it caches the converter of a type for
// good: a converter with a mutable field would relay what one call wrote to whatever reads with it later.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class RelayConverter : JsonConverter<Note>
    {
        string _last = "";
        public override Note Read(ref Utf8JsonReader reader, System.Type t, JsonSerializerOptions o) { var seen = _last; _last = reader.GetString() ?? ""; return new Note { Text = seen }; }
        public override void Write(Utf8JsonWriter w, Note v, JsonSerializerOptions o) => w.WriteStringValue(v.Text);
    }

    [JsonConverter(typeof(RelayConverter))]
    public sealed class Note { public string Text { get; set; } = ""; }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Deserialize<Note>(JsonSerializer.Serialize(e.AggregateId))!.Text;
            return state;
        }
    }
}
