// expect: runtime-contained
// Issue 28 (sec-typeinit), attacking the fix for cross-call-type-init-exception-*.cs: an explicit static constructor
// instead of a static field initializer (no beforefieldinit: the runtime runs it at the type's first "real" use, not
// whenever it likes). The host's RunClassConstructor at load runs it all the same.
// Outcome: refused at load (LOAD_FAILED "the static initialiser of Escape.Boom threw InvalidOperationException"), so the
// kept exception never reaches a call (TypeInitializerTests.TheOpenFindingsFailTheirLoad).
using System;
using EventSourcing;

namespace Escape
{
    public static class Boom
    {
        static Boom() { throw new InvalidOperationException("kept"); }
        public static int Value() => 1;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Exception kept;
            try { state.Count = Boom.Value(); return state; }
            catch (TypeInitializationException t) { kept = t.InnerException!; }
            var n = 0;
            foreach (var line in $"{kept}".Split('\n'))
                if (line.Contains("Deep", StringComparison.Ordinal)) n++;
            state.Count = n;
            try { Deep(kept, n + 1); } catch (InvalidOperationException) { }
            return state;
        }

        static int Deep(Exception ex, int depth)
        {
            if (depth <= 1) throw ex;
            return Deep(ex, depth - 1) + depth;
        }
    }
}
