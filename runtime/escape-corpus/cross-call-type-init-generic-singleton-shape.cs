// expect: compile-error forbidden construct: static constructor of the generic type
// Issue 28 (sec-typeinit), attacking the fix for cross-call-generic-cctor-exception.cs: the one static constructor a
// generic type may keep is the compiler's closure singleton (newobj Self::.ctor(); stsfld Self::<>9; ret). Written by
// hand, that shape passes the static-field rule (a sealed, field-less singleton), but its constructor throws: the static
// constructor fails at first use inside a call and the runtime keeps the constructor's exception per instantiation.
// Outcome: refused: the singleton's constructor must be exactly ldarg.0; call Object::.ctor; ret.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class Boom<T>
    {
        public static readonly Boom<T> Instance = new Boom<T>();
        Boom() { if (typeof(T) != typeof(string)) throw new InvalidOperationException("kept"); }
        public string Name() => typeof(T).Name;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try { state.Value = Boom<int>.Instance.Name(); }
            catch (TypeInitializationException t) { state.Value = $"{t.InnerException}"; }
            return state;
        }
    }
}
