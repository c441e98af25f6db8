// expect: compile-error ES0002: forbidden construct: mutable field Escape.CountingConverter._calls in a JSON converter
// Red team (issue 10): the serializer creates a [JsonConverter] once per JsonSerializerOptions and caches it for the life of
// the assembly (the host's per-assembly options, used by Event.DataAs<T> and for the state, or JsonSerializerOptions.Default):
// its instance fields counted 1, 2, 3 over three separate apply requests.
// Outcome: converters (and naming policies, exceptions) may only have readonly fields of primitive-like types or converters.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class CountingConverter : JsonConverter<long>
    {
        long _calls;
        public override long Read(ref Utf8JsonReader reader, System.Type t, JsonSerializerOptions o) { reader.GetInt64(); return ++_calls; }
        public override void Write(Utf8JsonWriter w, long v, JsonSerializerOptions o) => w.WriteNumberValue(v);
    }

    public sealed record Data([property: JsonConverter(typeof(CountingConverter))] long A);
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = e.DataAs<Data>().A; // the number of calls so far in this executor
            return state;
        }
    }
}
