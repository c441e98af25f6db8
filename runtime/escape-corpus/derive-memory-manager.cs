// expect: compile-error ES0002: forbidden construct: Escape.Rigged derives from System.Buffers.MemoryManager<T>
// Issue 22, red team: a MemoryManager<T> makes Memory<T> over memory the tenant controls and sees being written or pinned by
// framework code that accepts Memory<T> (its GetSpan is called whenever .Span is read).
// Outcome: MemoryManager<T> is not on the derivation list (and its Pin returns a MemoryHandle, a denied type).
using System;
using System.Buffers;
using EventSourcing;

namespace Escape
{
    public sealed class Rigged : MemoryManager<char>
    {
        readonly char[] _chars = new char[64];
        public override Span<char> GetSpan() => _chars;
        public override MemoryHandle Pin(int elementIndex = 0) => default;
        public override void Unpin() { }
        protected override void Dispose(bool disposing) { }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var m = new Rigged().Memory;
            e.EventId.AsSpan().CopyTo(m.Span);
            state.Value = new string(m.Span);
            return state;
        }
    }
}
