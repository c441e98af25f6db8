// expect: compile-error ES0002: forbidden construct: Escape.LineContext declares Stash in a JsonSerializerContext
// Issue 27 red team (i27-redteam): the tenant's half of a generated context may only declare the class. Smuggle a member
// as a nested type (which itself holds a static readonly of an allowed type, and a nested converter) rather than a field.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext
    {
        public static class Stash { public const string Tag = "x"; }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = LineContext.Stash.Tag + JsonSerializer.Serialize(new Line(), LineContext.Default.Line);
            return state;
        }
    }
}
