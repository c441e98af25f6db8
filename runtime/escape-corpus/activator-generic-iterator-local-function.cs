// expect: compile-error System.Activator
// Issue 26 split the verifier's walker into partial files (definitions, method bodies, generic expansion):
// the forbidden call sits in a local function of an iterator of a method of a nested generic type, reached
// only through a closed instantiation, so each of those parts has to see it.
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        private sealed class Outer<T>
        {
            public sealed class Inner<U>
            {
                public IEnumerable<string> Names()
                {
                    string Make() => System.Activator.CreateInstance(typeof(U))?.ToString() ?? "";
                    yield return Make();
                }
            }
        }

        public EscapeState Apply(EscapeState state, Event e)
        {
            foreach (var n in new Outer<int>.Inner<EscapeState>().Names()) state.Value = n;
            return state;
        }
    }
}
