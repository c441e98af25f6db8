// expect: compile-error ES0002: forbidden construct: generic expansion
// Issue 22 red team: memory outside the tenant's cap and outside the GC heap. A generic method that calls itself with a
// bigger type argument (polymorphic recursion) makes the runtime create, at run time, types no assembly names: List<T>,
// Tuple<T, T>, List<Tuple<List<T>, ...>>... Built only from framework types, they belong to CoreLib's loader heap, which is
// never unloaded: each call leaves ~2^Depth new permanent types (native memory, not charged, not under DOTNET_GCHeapHardLimit)
// until RLIMIT_DATA kills the executor in whichever call allocates next, a neighbour's.
using System;
using System.Collections.Generic;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        const int Depth = 16;

        // The call's counter picks a path of new types (a different one per call), then a full tree under it.
        static int Path<T>(long n, int bits) =>
            bits == 0 ? Tree<T>(Depth) : (n & 1) == 0 ? Path<List<T>>(n >> 1, bits - 1) : Path<Tuple<T, T>>(n >> 1, bits - 1);

        static int Tree<T>(int depth) => depth == 0 ? 1 : Tree<List<T>>(depth - 1) + Tree<Tuple<T, T>>(depth - 1);

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count += Path<string>(state.Count + e.Version, 24);
            state.Value = "grew";
            return state;
        }
    }
}
