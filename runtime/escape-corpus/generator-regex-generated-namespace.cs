// expect: compile-error ES0002: forbidden construct: type System.Text.RegularExpressions.Generated.Runner declared in namespace System.Text.RegularExpressions.Generated
// Issue 27 (generators), red team: the Regex generator puts its classes in System.Text.RegularExpressions.Generated; put a
// hand-written runner there so that it looks like generated code.
// Outcome: the System namespaces stay reserved for source the tenant wrote; only trees the generator added are exempt.
using System;
using System.Text.RegularExpressions;
using EventSourcing;

namespace System.Text.RegularExpressions.Generated
{
    public sealed class Runner : RegexRunner
    {
        public string Seen = "";
        protected override void Scan(ReadOnlySpan<char> text) => Seen += text.ToString();
    }
}

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e) => state;
    }
}
