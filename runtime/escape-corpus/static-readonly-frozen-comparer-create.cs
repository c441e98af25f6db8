// expect: compile-error static readonly field
// Issue 27: EqualityComparer<T>.Create over a capturing lambda, kept in a static FrozenDictionary: refused as a tenant comparer would be.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder
    {
        public static readonly FrozenDictionary<string, int> Known = Make();
        static FrozenDictionary<string, int> Make()
        {
            var seen = new List<string>();
            return new Dictionary<string, int> { ["x"] = 1 }.ToFrozenDictionary(EqualityComparer<string>.Create((a, b) => { seen.Add(a ?? ""); return a == b; }, s => seen.Count * 0));
        }
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            _ = Holder.Known.ContainsKey(e.EventType); state.Count = Holder.Known.Comparer.GetHashCode("");
            return state;
        }
    }
}
