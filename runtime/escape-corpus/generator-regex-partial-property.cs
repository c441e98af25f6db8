// expect: runtime-isolated
// Issue 27 red team (i27-redteam): [GeneratedRegex] on a partial property (C# 13) instead of a partial method, in a
// partial class whose tenant half also holds an ordinary instance member. The generator completes the property; the
// generated runner's static instance is the generator's and per upload. It should compile and simply work.
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public static partial class Patterns
    {
        [GeneratedRegex("^[a-z]+-(\\d+)$", RegexOptions.CultureInvariant)]
        public static partial Regex Sku { get; }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var m = Patterns.Sku.Match("abc-42");
            state.Value = m.Success ? m.Groups[1].Value : "";
            state.Count++;
            return state;
        }
    }
}
