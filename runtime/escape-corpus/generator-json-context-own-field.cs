// expect: compile-error ES0002: forbidden construct: Escape.LineContext declares Calls in a JsonSerializerContext
// Issue 27 (generators), red team: let the generator write the context, and add a field to the tenant's partial half. The
// generated static Default is one object for every call: the field would carry state from one call to the next.
// Outcome: a context is the generator's output and nothing else; the tenant's half may only declare the class and its attributes.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext
    {
        public int Calls;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = ++LineContext.Default.Calls;
            return state;
        }
    }
}
