// expect: compile-error ES0002: forbidden construct: readonly field of a mutable type Escape.Policy._seen in a JSON naming policy
// Red team (issue 10): a converter factory hands a tenant JsonNamingPolicy to the framework's JsonStringEnumConverter<T>;
// the converter (and the policy inside it) is cached with the options, so the policy's list would outlive the call.
// Outcome: naming policies are held to the same rule as converters.
using System.Collections.Generic;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public enum Color { Red, Green }

    public sealed class Policy : JsonNamingPolicy
    {
        readonly List<string> _seen = new();
        public override string ConvertName(string name) { _seen.Add(name); return name + _seen.Count; }
    }

    public sealed class Factory : JsonConverterFactory
    {
        public override bool CanConvert(System.Type t) => t == typeof(Color);
        public override JsonConverter CreateConverter(System.Type t, JsonSerializerOptions o) => new JsonStringEnumConverter<Color>(new Policy());
    }

    public sealed class EscapeState { [JsonConverter(typeof(Factory))] public Color Color { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e) => state;
    }
}
