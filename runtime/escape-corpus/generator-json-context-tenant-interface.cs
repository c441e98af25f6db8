// expect: compile-error ES0002
// Issue 27 red team (i27-redteam): the tenant's half of the context adds no member, only a base interface that has a default
// (static-virtual-free) member with a body: the code lives in the interface, and the generated context "is" one.
// A default interface member is code the tenant reaches through the context; allowed or not, it carries no state (interfaces
// hold no instance fields) — but the tenant half also adds an explicit interface implementation, which is a member.
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    public interface ITagged { string Tag(); }

    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext, ITagged
    {
        string ITagged.Tag() => "smuggled";
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = ((ITagged)LineContext.Default).Tag();
            return state;
        }
    }
}
