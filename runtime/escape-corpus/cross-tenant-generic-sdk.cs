// expect: runtime-isolated
// Issue 12 (shared executors): generic sharing. Instantiations over a type from the SDK or the framework (EqualityComparer<Event>,
// Array.Empty<Event>, ImmutableList<Event>.Empty, Enumerable.Empty<string>…) are one object for every tenant of the process.
// Look for anything another tenant could have left in them, and try to leave something.
// Outcome: they are immutable singletons: empty, and every attempt to add to one throws or gives a new object.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var seen = new List<string>
            {
                "array:" + Array.Empty<Event>().Length,
                "immutableList:" + ImmutableList<Event>.Empty.Count,
                "immutableArray:" + ImmutableArray<Event>.Empty.Length,
                "immutableDict:" + ImmutableDictionary<string, Event>.Empty.Count,
                "frozen:" + FrozenDictionary<string, string>.Empty.Count,
                "enumerable:" + Enumerable.Empty<Event>().Count(),
                "string:" + string.Empty.Length,
                "comparer:" + EqualityComparer<Event>.Default.Equals(e, e),
            };
            try { ((IList<Event>)Array.Empty<Event>()).Add(e); seen.Add("array-add:kept"); } catch (NotSupportedException) { seen.Add("array-add:refused"); }
            try { ((ICollection<string>)FrozenDictionary<string, string>.Empty.Keys).Add(e.AggregateId); seen.Add("frozen-add:kept"); } catch (NotSupportedException) { seen.Add("frozen-add:refused"); }
            seen.Add("immutable-add:" + ReferenceEquals(ImmutableList<Event>.Empty.Add(e), ImmutableList<Event>.Empty));
            state.Value = string.Join(",", seen);
            state.Count++;
            return state;
        }
    }
}
