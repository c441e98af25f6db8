// expect: runtime-contained
// Issue 22 red team: get a neighbour blamed for memory. The host takes an OutOfMemoryException for "memory held by
// loaded code" when, after a full collection at the judgement, half the heap is still live, and the tenant charged the
// most in the executor is blamed and quarantined. Tenant code may throw an OutOfMemoryException itself; an inner
// exception or Data (which would keep its memory alive through the judgement) are refused, but its Message is alive too:
// 140 MiB of message, on a 256 MiB heap, is "half the heap held by loaded code", charged to nobody. Closed by
// TenantMemory.HeldElsewhere: what the exception's message holds does not count as held elsewhere.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            throw new OutOfMemoryException(new string('x', 70 * 1024 * 1024));
        }
    }
}
