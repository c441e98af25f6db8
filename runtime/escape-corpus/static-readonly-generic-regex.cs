// expect: compile-error in a generic type
// Issue 27: static readonly Regex is allowed in ordinary types; in a generic type each instantiation would build its own at call time (memory outside the load-time charge), still refused.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder<T> { public static readonly System.Text.RegularExpressions.Regex R = new("x"); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Holder<string>.R.IsMatch(e.EventType) ? 1 : 0;
            return state;
        }
    }
}
