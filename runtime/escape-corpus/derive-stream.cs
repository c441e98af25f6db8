// expect: compile-error ES0002: forbidden construct: Escape.Peek derives from System.IO.Stream
// Issue 22, red team: Stream consumers (StreamReader, Stream.CopyTo, JsonSerializer.Deserialize(Stream)) call Read(Span<byte>) with
// buffers they rented; a Read that writes nothing and reports them full hands back their old contents.
// Outcome: refused twice over: System.IO is a denied namespace (ES0001) and Stream is not on the derivation list (ES0002).
using System;
using System.IO;
using EventSourcing;

namespace Escape
{
    public sealed class Peek : Stream
    {
        int _left = 4;
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => 0;
        public override long Position { get => 0; set { } }
        public override void Flush() { }
        public override int Read(byte[] buffer, int offset, int count) => _left-- > 0 ? count : 0; // writes nothing
        public override int Read(Span<byte> buffer) => _left-- > 0 ? buffer.Length : 0;
        public override long Seek(long offset, SeekOrigin origin) => 0;
        public override void SetLength(long value) { }
        public override void Write(byte[] buffer, int offset, int count) { }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = new StreamReader(new Peek()).ReadToEnd();
            return state;
        }
    }
}
