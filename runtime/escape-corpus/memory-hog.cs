// expect: runtime-contained
// Allocates until the heap limit (DOTNET_GCHeapHardLimit set by the TypeScript side): OutOfMemoryException or the process dies.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var keep = new System.Collections.Generic.List<long[]>();
            while (true) keep.Add(new long[1 << 20]);
            return state;
        }
    }
}
