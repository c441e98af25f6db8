// expect: runtime-isolated
// Issue 27: what item 5 allows, loaded beside another tenant in one executor: static readonly Regex, FrozenDictionary and
// ImmutableArray fields (built at load), new T() under new(), SHA256.HashData. Look at everything they expose: the Regex's
// options, timeout and pattern, the frozen keys and comparer, a fresh T, a hash.
// Outcome: each is this assembly's own object, built from its own constants; the Regex static cache is off and the hash
// is a pure function; nothing of another tenant's is reachable from them, and every call sees the same.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public sealed class Blank { public string Seen { get; set; } = "blank"; }

    internal static class Kept
    {
        public static readonly Regex Any = new(".*", RegexOptions.Singleline);
        public static readonly FrozenDictionary<string, int> Map = new Dictionary<string, int> { ["k"] = 1 }.ToFrozenDictionary();
        public static readonly ImmutableArray<string> Names = ["n"];
        public static T Fresh<T>() where T : new() => new T();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var seen = new List<string>
            {
                "regex:" + Kept.Any + "/" + Kept.Any.Options + "/" + Kept.Any.MatchTimeout + "/" + Kept.Any.Match(e.Data.GetRawText()).Value,
                "groups:" + string.Join("|", Kept.Any.GetGroupNames()),
                "map:" + string.Join("|", Kept.Map.Keys) + "/" + Kept.Map.Comparer + "/" + string.Join("|", Kept.Map.Values),
                "names:" + string.Join("|", Kept.Names),
                "fresh:" + Kept.Fresh<Blank>().Seen,
                "hash:" + Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(Array.Empty<byte>())),
            };
            state.Value = string.Join(",", seen);
            state.Count++;
            return state;
        }
    }
}
