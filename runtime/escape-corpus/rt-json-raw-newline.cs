// expect: runtime-contained
// Red team (issue 10): a converter writes raw JSON into the state (Utf8JsonWriter.WriteRawValue, unvalidated; even validated raw
// JSON may contain line breaks as whitespace). The host copied the state's bytes into its response line unchecked: the line
// ended early and the tenant forged a whole protocol line ({"id":999,"type":"result",...}) on the host's stdout.
// Outcome: the host checks that a state is one JSON value without line breaks; this one fails with STATE_SERIALIZATION_FAILED.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class RawConverter : JsonConverter<string>
    {
        public override string Read(ref Utf8JsonReader reader, System.Type t, JsonSerializerOptions o) => reader.GetString() ?? "";
        public override void Write(Utf8JsonWriter w, string v, JsonSerializerOptions o) =>
            w.WriteRawValue("\"x\"}]}]}}\n{\"id\":999,\"type\":\"result\",\"payload\":{\"forged\":true}}\n{\"a\":[[{\"b\":\"", skipInputValidation: true);
    }

    public sealed class EscapeState { [JsonConverter(typeof(RawConverter))] public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e) => state;
    }
}
