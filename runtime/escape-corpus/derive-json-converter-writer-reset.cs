// expect: runtime-isolated
// Issue 22 red team: JsonConverter<T>.Write is on the list and is handed the host's Utf8JsonWriter. The writer has no API
// to read what is in its buffer, but Reset(IBufferWriter) redirects it and BytesPending/BytesCommitted give sizes. If the
// host serialized several tenants' states (or the response line) through one writer, a converter could learn the sizes of
// what others wrote, or divert them. It is handed the runner's own scratch writer (one per upload, reset per state), so it
// sees sizes of its own state only and diverts nothing but its own output. Runs beside a victim: sees nothing of it.
using System;
using System.Buffers;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class SizesConverter : JsonConverter<Sizes>
    {
        public override Sizes Read(ref Utf8JsonReader r, Type t, JsonSerializerOptions o) { r.Skip(); return new Sizes(); }
        public override void Write(Utf8JsonWriter w, Sizes v, JsonSerializerOptions o)
        {
            // Whatever was committed or pending before this value: only this state's own opening bytes.
            var seen = w.BytesCommitted + "/" + w.BytesPending;
            w.Flush();
            var after = w.BytesCommitted + "/" + w.BytesPending;
            w.WriteStringValue(seen + "|" + after);
        }
    }

    [JsonConverter(typeof(SizesConverter))] public sealed class Sizes { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } public Sizes Probe { get; set; } = new(); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = "mine";
            state.Count++;
            return state;
        }
    }
}
