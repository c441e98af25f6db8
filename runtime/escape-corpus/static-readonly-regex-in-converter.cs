// expect: compile-error forbidden construct: readonly field of a mutable type Escape.PatternConverter._pattern in a JSON converter
// Issue 28 (sec-typeinit), attacking the fix for static-readonly-regex-runner-memory.cs: the host drops the runners of the
// Regex instances it finds in the upload's static fields after each call; a Regex held by a JSON converter (kept by the
// serializer for the life of the upload, created when the runner is prepared) is not in a static field. One backtracking
// match over a long input inside a call would leave its runner's arrays held by the converter.
// Outcome: refused: a Regex is not among the field types of an object the runtime keeps (converters, naming policies,
// exceptions); a static readonly Regex of a static class is what to use.
using System;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public sealed class PatternConverter : JsonConverter<Tagged>
    {
        readonly Regex _pattern = new Regex("^(?:a|ab)*c$", RegexOptions.CultureInvariant, TimeSpan.FromSeconds(5));
        public override Tagged Read(ref Utf8JsonReader r, Type t, JsonSerializerOptions o) { r.Skip(); return new Tagged(); }
        public override void Write(Utf8JsonWriter w, Tagged v, JsonSerializerOptions o)
        {
            var sb = new StringBuilder();
            for (var i = 0; i < 1_000_000; i++) sb.Append("ab");
            w.WriteBooleanValue(_pattern.IsMatch(sb.ToString()));
        }
    }

    [JsonConverter(typeof(PatternConverter))] public sealed class Tagged { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } public Tagged Tag { get; set; } = new(); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e) { state.Count++; return state; }
    }
}
