// expect: compile-error ES0002: forbidden construct: Escape.Runner derives from System.Text.RegularExpressions.RegexRunner
// Issue 22, red team: a Regex subclass can install its own RegexRunnerFactory (the protected 'factory' field); the engine then calls
// the tenant's RegexRunner.Scan/FindFirstChar/Go with its own state: runtext, the backtracking stacks runtrack/runstack/runcrawl,
// which the engine keeps and reuses.
// Outcome: Regex, RegexRunner and RegexRunnerFactory are not on the derivation list.
using System;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public sealed class Runner : RegexRunner
    {
        public string Seen = "";
        protected override void Scan(ReadOnlySpan<char> text) => Seen = text.ToString() + (runtrack?.Length ?? -1);
    }

    public sealed class Factory : RegexRunnerFactory
    {
        protected override RegexRunner CreateInstance() => new Runner();
    }

    public sealed class Rigged : Regex
    {
        public Rigged() { factory = new Factory(); }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = new Rigged().IsMatch(e.EventId).ToString();
            return state;
        }
    }
}
