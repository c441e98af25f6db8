// expect: runtime-isolated
// Issue 27 red team (i27-redteam): memory nobody is charged for, in a Regex kept for the life of the upload (generated: the generator's static Regex instance, item 1).
// A Regex caches its RegexRunner between matches, and the runner keeps its backtracking arrays (runtrack/runstack, or the
// generated code's Array.Resize(ref base.runstack, ...)) at the largest size any match needed. One call matches a
// backtracking pattern against a long input built from the event: the arrays grow inside the call (its transient
// allocation, charged to nobody) and stay referenced by the kept Regex after it returns.
// Verdict written: runtime-contained is what it should be at worst (a call whose retained growth is charged or refused);
// HOLE (found, i27-redteam): measured in-process (GC.GetTotalMemory(true) before/after one apply): load charged 14,368
// bytes (61,016 after the call, preparation included); 18,540 KiB live after the call returned, charged to nobody (control, the same Regex built inside the call: 109 KiB).
// The corpus test only compiles runtime-* files, so it cannot fail on this; the report has the reproduction.
// CLOSED (issue 28, sec-typeinit; verdict now runtime-isolated: it runs, keeps nothing, and beside the victim in one
// executor sees nothing of it — test/runtime/shared-executors.int-spec.ts): the host finds the Regex instances an upload keeps (its static fields and the immutable
// collections they hold, the generator's instance included) at load and drops their runners after each of its calls
// (Execution/KeptRegexRunners.cs): the arrays are that call's transient memory (KeptRegexRunnersTests: <2 MiB left).
using System;
using System.Text;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public static partial class Patterns
    {
        [GeneratedRegex("^(?:a|ab)*c$", RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 5000)]
        public static partial Regex Greedy();
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var sb = new StringBuilder();
            for (var i = 0; i < 1_000_000; i++) sb.Append("ab");
            state.Value = Patterns.Greedy().IsMatch(sb.ToString()) ? "match" : "no";
            state.Count++;
            return state;
        }
    }
}
