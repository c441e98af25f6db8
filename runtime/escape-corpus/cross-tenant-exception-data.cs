// expect: compile-error System.Exception.Data
// Issue 12: exceptions carrying objects: stash the event in an exception's Data dictionary (the runtime keeps the exception of
// a failed static initializer for good) for whatever reads it later in the shared executor.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public static class Broken { public static readonly string Value = Fail(); static string Fail() => throw new InvalidOperationException("x"); }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try { _ = Broken.Value; }
            catch (TypeInitializationException ex) { ex.Data["event"] = e; }
            return state;
        }
    }
}
