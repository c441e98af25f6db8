// expect: compile-error ES0002: forbidden construct: Escape.Resolver implements System.Text.Json.Serialization.Metadata.IJsonTypeInfoResolver
// Issue 27 (generators), red team: generated contexts implement IJsonTypeInfoResolver, so the derivation list has it; implement
// it by hand with a counter and plug it into options kept in a static field.
// Outcome: only a generated context may implement it (GeneratedCodePolicy).
using System;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using EventSourcing;

namespace Escape
{
    public sealed class Resolver : IJsonTypeInfoResolver
    {
        public int Calls;
        public JsonTypeInfo? GetTypeInfo(Type type, JsonSerializerOptions options) { Calls++; return null; }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var r = new Resolver();
            r.GetTypeInfo(typeof(int), new JsonSerializerOptions());
            state.Count = r.Calls;
            return state;
        }
    }
}
