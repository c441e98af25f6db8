// expect: compile-error forbidden construct: static readonly field Escape.Holder.Value of a mutable/reference type
// Issue 28 (sec-typeinit), attacking the fix for cross-call-type-init-exception-*.cs: a lazy static instead of a static
// initializer. Lazy<T> (ExecutionAndPublication) caches its factory's exception and throws the same object on every later
// Value: the same channel as a failed type initializer, with the initializer itself succeeding at load.
// Outcome: refused: Lazy<T> is not one of the immutable types a static readonly field may hold.
using System;
using EventSourcing;

namespace Escape
{
    public static class Holder
    {
        public static readonly Lazy<int> Value = new Lazy<int>(() => throw new InvalidOperationException("kept"));
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try { state.Count = Holder.Value.Value; }
            catch (InvalidOperationException ex) { state.Value = $"{ex}"; }
            return state;
        }
    }
}
