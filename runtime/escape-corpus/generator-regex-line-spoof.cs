// expect: compile-error ES0002: forbidden construct: Escape.Runner derives from System.Text.RegularExpressions.RegexRunner
// Issue 27 (generators), red team: the Regex generator's output may derive from RegexRunner; claim to be that output with a
// #line directive naming the generator's file, and write a runner that keeps what it saw in a field of a static Regex.
// Outcome: generated code is told apart by syntax tree, never by file name; the hand-written runner is refused.
using System;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
#line 1 "System.Text.RegularExpressions.Generator/System.Text.RegularExpressions.Generator.RegexGenerator/RegexGenerator.g.cs"
    public sealed class Runner : RegexRunner
    {
        public string Seen = "";
        protected override void Scan(ReadOnlySpan<char> text) => Seen += text.ToString();
    }

    public sealed class Factory : RegexRunnerFactory
    {
        protected override RegexRunner CreateInstance() => new Runner();
    }

    public sealed class Rigged : Regex
    {
        public static readonly Rigged Shared = new();
        public Rigged() { factory = new Factory(); }
    }
#line default

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Rigged.Shared.IsMatch(e.EventId).ToString();
            return state;
        }
    }
}
