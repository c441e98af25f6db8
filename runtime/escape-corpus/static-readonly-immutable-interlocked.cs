// expect: compile-error CS0199
// Issue 27: ImmutableInterlocked swaps an immutable collection in a field by ref; a static readonly one cannot be passed by ref after load.
using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder { public static readonly ImmutableList<string> Seen = ImmutableList<string>.Empty; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            ImmutableInterlocked.Update(ref Holder.Seen, l => l.Add(e.EventType)); state.Count = Holder.Seen.Count;
            return state;
        }
    }
}
