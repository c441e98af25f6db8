// expect: compile-error ES0002: forbidden construct: Escape.Sub derives from System.Text.Json.Serialization.JsonSerializerContext (through Escape.LineContext)
// Issue 27 (generators), red team: derive from a generated context (not partial, so the generator leaves it alone) and keep a
// static instance of the subclass with a field of its own.
// Outcome: only the generator's own context class may stand between a tenant type and JsonSerializerContext.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext { }

    internal sealed class Sub : LineContext
    {
        public static readonly Sub Shared = new();
        public int Calls;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++Sub.Shared.Calls;
            return state;
        }
    }
}
