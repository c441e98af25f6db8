// expect: runtime-contained
// Issue 27 red team (i27-redteam): carry state from one call to the next through the exception object the runtime keeps
// for a failed static initializer. Data/HelpLink/Source are refused for exactly this reason (ApiPolicy.DeniedMembers), but
// the kept object has one more mutable member: its captured stack trace. Throwing the kept InnerException again replaces
// its trace; the next call (same upload, same executor, any later call) reads it back. Here the depth of a recursion
// encodes an arbitrary counter: call N throws it from N+1 nested Deep frames, call N+1 counts them and goes one deeper.
// HOLE (found, i27-redteam): compiles and runs; four calls with identical input (null state, same event) give state.Count
// 0,1,2,3 (probe through InProcessHost Exec+Compile, one load, four applies). The verdict
// written is one possible fix (refuse Exception.StackTrace, or refuse throwing an exception the tenant did not create in
// this call); whatever the fix, this file must not compile and run with cross-call memory.
// CLOSED (issue 28, sec-typeinit): the host runs every non-generic static initializer at load and now refuses the load
// when one throws (LOAD_FAILED "the static initialiser of Escape.Boom threw InvalidOperationException: kept …"): the
// context goes with the kept exception, and no call ever runs (TypeInitializerTests.TheOpenFindingsFailTheirLoad).
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
            var previous = kept.StackTrace ?? "";
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
