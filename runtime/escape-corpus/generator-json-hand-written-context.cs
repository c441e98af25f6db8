// expect: compile-error ES0002: forbidden construct: Escape.Ctx derives from System.Text.Json.Serialization.JsonSerializerContext
// Issue 27 (generators), red team: write by hand what the System.Text.Json generator writes — a JsonSerializerContext with a
// static Default — and give it a field of its own: the shared Default would carry the count from one call to the next (and
// GetTypeInfo could hand the serializer metadata built from the tenant's own delegates).
// Outcome: only the generator's output may derive from JsonSerializerContext (GeneratedCodePolicy), on every compile.
using System;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using EventSourcing;

namespace Escape
{
    public sealed class Ctx : JsonSerializerContext
    {
        public static Ctx Default { get; } = new Ctx();
        public int Calls;
        public Ctx() : base(null) { }
        protected override JsonSerializerOptions? GeneratedSerializerOptions => null;
        public override JsonTypeInfo? GetTypeInfo(Type type) { Calls++; return null; }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Ctx.Default.GetTypeInfo(typeof(int));
            state.Count = Ctx.Default.Calls;
            return state;
        }
    }
}
