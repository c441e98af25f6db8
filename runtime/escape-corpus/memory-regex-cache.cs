// expect: runtime-isolated
// Issue 22 red team: memory kept past the call and past the tenant's cap, charged to nobody. The static Regex methods
// (Regex.IsMatch(input, pattern)...) keep the last Regex.CacheSize (15) patterns they parsed in a process-wide cache: a
// pattern of millions of characters is kept (its string and its parsed code) after the call, uncharged. 15 of them fill
// half the executor's heap; the next call that runs out of memory (a neighbour's) is then answered HOST_MEMORY_EXHAUSTED
// and the tenant charged the most (a neighbour, not this one) is blamed. Closed by HostSetup: Regex.CacheSize = 0, so
// nothing parsed outlives its call. Shared executors: it also must see nothing of its neighbour.
using System.Text.RegularExpressions;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            // 2 MiB of pattern per event, distinct per call so that each one is a new cache entry.
            var pattern = "(?:" + state.Count + ")" + new string('a', 1 << 20);
            state.Count++;
            state.Value = Regex.IsMatch("mine", pattern) ? "matched" : "mine";
            return state;
        }
    }
}
