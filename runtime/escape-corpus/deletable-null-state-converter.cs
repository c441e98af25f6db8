// expect: runtime-contained
// Issue 27, item 8 (deletion): JSON null is how a removed key's state is written, and only IDeletableProjection may
// remove one. A projection without the opt-in whose state converter writes null would remove its key's state behind
// the contract's back (Apply returning null fails its event): the host refuses that state (STATE_SERIALIZATION_FAILED).
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class NullWriter : JsonConverter<EscapeState>
    {
        public override EscapeState Read(ref Utf8JsonReader reader, System.Type t, JsonSerializerOptions o) { reader.Skip(); return new EscapeState(); }
        public override void Write(Utf8JsonWriter w, EscapeState v, JsonSerializerOptions o) => w.WriteNullValue();
    }

    [JsonConverter(typeof(NullWriter))]
    public sealed class EscapeState { public long Count { get; set; } }

    public sealed class EscapeProjection : IProjection<EscapeState>
    {
        public string? ResolveKey(Event e) => throw new System.InvalidOperationException("no key");
        public EscapeState Apply(EscapeState state, Event e) { state.Count++; return state; }
    }
}
