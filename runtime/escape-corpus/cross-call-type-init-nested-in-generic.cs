// expect: compile-error forbidden construct: static constructor of the generic type
// Issue 28 (sec-typeinit), attacking the fix for cross-call-generic-cctor-exception.cs: a non-generic-looking type nested
// in a generic one (Outer<T>.Inner is generic in metadata, one type per T, and the host cannot run it at load), its
// static constructor failing only for the instantiation the event picks (a failure that depends on input).
// Outcome: refused like any generic type's own static constructor.
using System;
using EventSourcing;

namespace Escape
{
    public static class Outer<T>
    {
        public static class Inner
        {
            static Inner() { if (typeof(T) == typeof(int)) throw new InvalidOperationException("kept"); }
            public static string Name() => typeof(T).Name;
        }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try { state.Value = e.EventType == "A" ? Outer<int>.Inner.Name() : Outer<long>.Inner.Name(); }
            catch (TypeInitializationException t) { state.Value = $"{t.InnerException}"; }
            return state;
        }
    }
}
