// expect: compile-error ES0002: forbidden construct: Escape.Spy implements System.Buffers.IBufferWriter<T>
// Issue 22, red team: writers the framework fills (Encoding.GetBytes(ReadOnlySequence, IBufferWriter), Utf8JsonWriter, Base64)
// call GetSpan/GetMemory and Advance on a tenant IBufferWriter; a writer that hands out a span it keeps and reads later sees what the
// framework wrote there, and a Utf8JsonWriter.Reset(IBufferWriter) inside a converter would redirect the host's state writer.
// Outcome: IBufferWriter<T> is not on the derivation list; ArrayBufferWriter<T> (the framework's own) is the writer to use.
using System;
using System.Buffers;
using System.Text;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : IBufferWriter<byte>
    {
        readonly byte[] _buffer = new byte[4096];
        public int Written;
        public void Advance(int count) => Written += count;
        public Memory<byte> GetMemory(int sizeHint = 0) => _buffer.AsMemory(Written);
        public Span<byte> GetSpan(int sizeHint = 0) => _buffer.AsSpan(Written);
        public string Seen => Encoding.UTF8.GetString(_buffer, 0, Written);
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var spy = new Spy();
            Encoding.UTF8.GetBytes(new ReadOnlySequence<char>(e.EventId.ToCharArray()), spy);
            state.Value = spy.Seen;
            return state;
        }
    }
}
