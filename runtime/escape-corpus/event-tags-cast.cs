// expect: runtime-isolated
// Issue 28: Event.Tags is one list for every projection handed the same event object in an executor. Cast it to each
// mutable collection interface and type it might be (IList<string>, ICollection<string>, string[], List<string>) and write.
// Outcome: it is an ImmutableArray<string> (a private copy made when the event was built): every write throws
// NotSupportedException, the type tests fail, and the tags read back unchanged.
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var seen = new List<string>();
            try { ((IList<string>)e.Tags)[0] = "forged"; seen.Add("set"); } catch (System.Exception x) { seen.Add(x.GetType().Name); }
            try { ((ICollection<string>)e.Tags).Add("forged"); seen.Add("add"); } catch (System.Exception x) { seen.Add(x.GetType().Name); }
            try { ((IList<string>)e.Tags).RemoveAt(0); seen.Add("remove"); } catch (System.Exception x) { seen.Add(x.GetType().Name); }
            if (e.Tags is string[] array && array.Length > 0) array[0] = "forged";
            if (e.Tags is List<string> list) list.Add("forged");
            seen.Add("tags:" + string.Join("|", e.Tags));
            state.Value = string.Join(",", seen);
            state.Count++;
            return state;
        }
    }
}
