// expect: runtime-isolated
// Issue 27 (generators, JSON options), loaded beside another tenant in one executor: a [GeneratedRegex], a generated
// JsonSerializerContext with its static Default, and a static readonly JsonSerializerOptions. Look at everything they expose:
// the regex's pattern, options and timeout, the context's options and its metadata (through serialization), the static
// options' settings, and whether they can still be changed.
// Outcome: each is this assembly's own object built from its own constants; the options are read-only (the host froze the
// static field at load, the context's are bound to it), so every call sees the same, and nothing of another tenant's is reachable.
using System;
using System.Collections.Generic;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; public int Qty { get; set; } }

    [JsonSerializable(typeof(Line))]
    [JsonSerializable(typeof(Dictionary<string, JsonElement>))]
    internal partial class SeenContext : JsonSerializerContext { }

    internal static partial class Kept
    {
        [GeneratedRegex("^(.*)$", RegexOptions.Singleline)]
        public static partial Regex Any();

        public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web) { WriteIndented = true };
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var raw = e.Data.GetRawText();
            var seen = new List<string>
            {
                "regex:" + Kept.Any() + "/" + Kept.Any().Options + "/" + Kept.Any().MatchTimeout + "/" + Kept.Any().Match(raw).Groups[1].Value,
                "context:" + SeenContext.Default.Options.IsReadOnly + "/" + SeenContext.Default.Options.PropertyNamingPolicy,
                "line:" + JsonSerializer.Serialize(JsonSerializer.Deserialize(raw, SeenContext.Default.Line) ?? new Line(), SeenContext.Default.Line),
                "data:" + string.Join("|", (JsonSerializer.Deserialize(raw, SeenContext.Default.DictionaryStringJsonElement) ?? new()).Keys),
                "options:" + Kept.Options.IsReadOnly + "/" + Kept.Options.WriteIndented + "/" + Kept.Options.Converters.Count,
            };
            state.Value = string.Join(",", seen);
            state.Count++;
            return state;
        }
    }
}
