// expect: runtime-isolated
// Issue 22, red team of an allowed base: JsonConverter<T>.Read. What can it see? It walks its reader to the end, token by token, and
// records every token, the reader's position and whether the value came as a sequence; then the same through
// JsonSerializer.Deserialize(string) (the serializer transcodes into a buffer rented from the shared pool) and through the state.
// Outcome: the reader is over exactly the value being read (a slice of the tenant's own request, or its own transcoded text): Read()
// returns false at its end, ValueSpan/ValueSequence are slices of it, and there is no API to the buffer around it. It sees its own
// event and nothing else, shared or alone.
using System;
using System.Buffers;
using System.Collections.Generic;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Seen { public string Tokens { get; set; } = ""; }

    public sealed class Walker : JsonConverter<Seen>
    {
        public override Seen Read(ref Utf8JsonReader reader, Type t, JsonSerializerOptions o)
        {
            var all = new StringBuilder($"[seq={reader.HasValueSequence} start={reader.TokenStartIndex}]");
            var copy = reader; // walk a copy past the value, as far as it goes
            try
            {
                while (copy.Read())
                    all.Append(copy.TokenType).Append('=').Append(Encoding.UTF8.GetString(copy.HasValueSequence ? copy.ValueSequence.ToArray() : copy.ValueSpan)).Append(';');
            }
            catch (JsonException ex)
            {
                all.Append("end:").Append(ex.GetType().Name);
            }
            all.Append($"[consumed={copy.BytesConsumed}]");
            reader.Skip();
            return new Seen { Tokens = all.ToString() };
        }

        public override void Write(Utf8JsonWriter w, Seen v, JsonSerializerOptions o) => w.WriteStringValue(v.Tokens);
    }

    public sealed class Probe { [JsonConverter(typeof(Walker))] public Seen Value { get; set; } = new(); }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var fromEvent = e.DataAs<Probe>().Value.Tokens;
            var fromString = JsonSerializer.Deserialize<Probe>("{\"Value\":{\"own\":[1,2,\"" + new string('o', 300) + "\"]}}")!.Value.Tokens;
            state.Value = fromEvent + "|" + fromString;
            state.Count++;
            return state;
        }
    }
}
