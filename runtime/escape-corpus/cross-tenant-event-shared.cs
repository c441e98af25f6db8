// expect: runtime-isolated
// Issue 12 (shared executors): the SDK's Event type is loaded once for the whole process, with its statics (the empty Data
// element, the read-only fallback serializer options). Read them, build Events of its own, and look at what an Event
// carries beyond this call's own event.
// Outcome: the statics are read-only and the same for every tenant; each call gets new Event objects built from its own
// request; nothing of another tenant's is reachable from them.
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var blank = new Event();
            var seen = new List<string>
            {
                "blank-data:" + blank.Data.GetRawText(),
                "blank-read:" + blank.DataAs<Dictionary<string, string>>().Count,
                "blank:" + blank,
                "own:" + e.AggregateId + "/" + e.Data.GetRawText() + "/" + (e.Metadata?.GetRawText() ?? "null"),
            };
            state.Value = string.Join(",", seen);
            state.Count++;
            return state;
        }
    }
}
