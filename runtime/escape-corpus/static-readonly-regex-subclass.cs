// expect: compile-error derives from
// Issue 27: static readonly Regex is allowed because nothing in a Regex changes; a subclass of the tenant (protected fields, its own state) is refused.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal sealed class Counting : System.Text.RegularExpressions.Regex
    {
        public long Calls;
        public Counting() : base("x") { }
    }

    internal static class Holder { public static readonly System.Text.RegularExpressions.Regex R = new Counting(); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = Holder.R.IsMatch(e.EventType); ((Counting)Holder.R).Calls++; state.Count = ((Counting)Holder.R).Calls;
            return state;
        }
    }
}
