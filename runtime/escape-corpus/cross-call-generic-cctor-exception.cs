// expect: compile-error forbidden construct: static constructor of the generic type Escape.Boom<T>
// Issue 27 red team (i27-redteam), variant of cross-call-type-init-exception-tostring.cs for the case the host cannot see at
// load: a generic type's static constructor. The host runs every non-generic static initializer eagerly at load (so a
// failure there could be refused at load); Boom<T> has no static field at all (only a throwing static constructor), runs
// on first use inside a call, and the runtime then keeps its exception, per instantiation, for good. The kept inner
// exception's trace is rewritten by rethrowing it and read back through string interpolation (no IL reference to any
// Exception member beyond the TypeInitializationException catch and InnerException).
// HOLE (found, i27-redteam): compiles and runs; four calls with identical input give state.Count 0,1,2,3 (InProcessHost
// Exec+Compile, one load, four applies).
// CLOSED (issue 28, sec-typeinit): a generic type may hold no static field (ES0002), so a static constructor of its own
// has nothing to initialise; it is refused at compile and load time unless it is exactly the compiler's closure singleton
// (AssemblyWalker.CheckGenericTypeInitializer).
using System;
using EventSourcing;

namespace Escape
{
    public static class Boom<T>
    {
        static Boom() { throw new InvalidOperationException("kept"); }
        public static string Value() => typeof(T).Name;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Exception kept;
            try { state.Value = Boom<int>.Value(); return state; }
            catch (TypeInitializationException t) { kept = t.InnerException!; }
            var previous = $"{kept}";
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
