// expect: runtime-contained
// Issue 28 (sec-typeinit), attacking the fix for cross-call-type-init-exception-*.cs: hide the failure from the load.
// Front's static initializer touches Boom first, catches Boom's TypeInitializationException and succeeds, so running
// Front's initializer at load throws nothing; Boom stays failed for good, its exception kept.
// Outcome: refused at load all the same: the host runs every non-generic type's initializer, and running Boom's again
// throws the kept exception (TypeInitializerTests.TheOpenFindingsFailTheirLoad).
using System;
using EventSourcing;

namespace Escape
{
    public static class Front
    {
        public static readonly int Ready = Touch();
        static int Touch()
        {
            try { return Boom.Value; }
            catch (TypeInitializationException) { return -1; }
        }
    }

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
            try { state.Count = Boom.Value + Front.Ready; return state; }
            catch (TypeInitializationException t) { kept = t.InnerException!; }
            var n = 0;
            foreach (var line in kept.ToString().Split('\n'))
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
