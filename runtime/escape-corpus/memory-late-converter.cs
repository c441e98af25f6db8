// expect: runtime-contained
// Issue 22 red team: memory kept past the call and past the cap through the serializer's cache. Preparing a runner builds
// (and charges) the metadata of every type reachable from the state type; a property typed object reaches, at run time, a
// type nobody prepared: its [JsonConverter] is created inside the call (its constructor fills a readonly field with 40 MiB)
// and kept by the assembly's serializer options for as long as it is loaded, charged to nobody. One such type per call
// fills the heap. Closed by ChargedTypeInfoResolver: charged when kept, refused (TENANT_MEMORY_EXCEEDED) over the cap.
using System;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class HogConverter : JsonConverter<Hidden>
    {
        readonly string _held = new string('c', 20 * 1024 * 1024);
        public override Hidden Read(ref Utf8JsonReader r, Type t, JsonSerializerOptions o) { r.Skip(); return new Hidden(); }
        public override void Write(Utf8JsonWriter w, Hidden v, JsonSerializerOptions o) => w.WriteNumberValue(_held.Length);
    }

    [JsonConverter(typeof(HogConverter))] public sealed class Hidden { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } public object? Any { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Any = new Hidden();
            return state;
        }
    }
}
