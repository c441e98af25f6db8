// expect: runtime-contained
// Issue 27 red team (i27-redteam), variant of cross-call-type-init-exception-stacktrace.cs without the StackTrace property:
// Exception.ToString() prints the same captured trace, so refusing get_StackTrace alone is no fix. Carry state from one call to the next through the exception object the runtime keeps
// for a failed static initializer. Data/HelpLink/Source are refused for exactly this reason (ApiPolicy.DeniedMembers), but
// the kept object has one more mutable member: its captured stack trace. Throwing the kept InnerException again replaces
// its trace; the next call (same upload, same executor, any later call) reads it back. Here the depth of a recursion
// encodes an arbitrary counter: call N throws it from N+1 nested Deep frames, call N+1 counts them and goes one deeper.
// HOLE (found, i27-redteam): compiles and runs; four calls with identical input (null state, same event) give state.Count
// 0,1,2,3 (probe through InProcessHost Exec+Compile, one load, four applies), reading the trace through ToString(). Note
// that $"{kept}" or "" + kept reach the same virtual ToString with no IL reference to Exception at all, so an API refusal
// cannot close this: the kept object itself must go (e.g. refuse at load an upload whose static initializer failed, since
// the host runs them all eagerly; generic types' static constructors are the remaining case). Verdict: any refusal.
// CLOSED (issue 28, sec-typeinit): refused at load like cross-call-type-init-exception-stacktrace.cs (no API refusal:
// the kept object never exists past the load; TypeInitializerTests.TheOpenFindingsFailTheirLoad).
using System;
using EventSourcing;

namespace Escape
{
    public static class Boom
    {
        public static readonly int Value = Fail();
        static int Fail() => throw new InvalidOperationException("kept");
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Exception kept;
            try { state.Value = Boom.Value.ToString(); return state; }
            catch (TypeInitializationException t) { kept = t.InnerException!; }
            var previous = kept.ToString();
            var n = 0;
            foreach (var line in previous.Split('\n'))
                if (line.Contains("Deep", StringComparison.Ordinal)) n++;
            state.Count = n; // what the previous call left
            try { Deep(kept, n + 1); } catch (InvalidOperationException) { }
            return state;
        }

        // Not a tail call (the JIT turns tail recursion into a loop): each level is a frame in the trace.
        static int Deep(Exception ex, int depth)
        {
            if (depth <= 1) throw ex;
            return Deep(ex, depth - 1) + depth;
        }
    }
}
