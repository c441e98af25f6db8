// expect: runtime-isolated
// Issue 22, red team: static constructors. A static constructor runs once, when its type is first used: always from its own tenant's
// call (no other tenant can name the type), and it may only fill static readonly fields of immutable primitive-like types. One that
// builds its value with pooled machinery (interpolation, string.Format, StringBuilder) to catch what the pool held, and a converter's
// static constructor run first from inside the serializer.
// Outcome: it sees what it builds, nothing else, shared or alone.
using System;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public static class Early
    {
        public static readonly string Value = Build();
        static string Build() => $"{new string('s', 300)}{42:D8}" + string.Format("{0,300}", "f") + new StringBuilder(512).Append('b', 3).ToString();
    }

    public sealed class Late : JsonConverter<int>
    {
        static readonly string Made = $"{1,200}{Early.Value.Length}";
        public override int Read(ref Utf8JsonReader r, Type t, JsonSerializerOptions o) => r.GetInt32() + Made.Trim().Length;
        public override void Write(Utf8JsonWriter w, int v, JsonSerializerOptions o) => w.WriteNumberValue(v);
    }

    public sealed class Box { [JsonConverter(typeof(Late))] public int N { get; set; } }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var n = JsonSerializer.Deserialize<Box>("{\"N\":1}")!.N;
            state.Value = n + ":" + Early.Value.Replace('s', '.').Replace(' ', '_');
            state.Count++;
            return state;
        }
    }
}
