// expect: compile-error ES0002: forbidden construct: Escape.Blank derives from System.Text.Decoder
// Issue 22, finding 1: shared executors put several tenants' assemblies in one process. EncodingExtensions.GetString(Encoding,
// in ReadOnlySequence<byte>) over a sequence of several segments rents a char[] from ArrayPool<char>.Shared per segment and hands
// it, as a span over the whole array, to the virtual Decoder.GetChars(ReadOnlySpan<byte>, Span<char>, bool). This override writes
// nothing and returns chars.Length: the string that comes back is whatever the pooled array last held (another tenant's
// interpolated strings, the host's). Neither ArrayPool nor any refused API appears in the source.
// Outcome: tenant types may derive only from the framework classes of DerivationPolicy; Decoder and Encoding are not among them
// (nor ReadOnlySequenceSegment<T>, which builds the multi-segment sequence).
using System;
using System.Buffers;
using System.Text;
using EventSourcing;

namespace Escape
{
    public sealed class Blank : Decoder
    {
        public override int GetCharCount(byte[] bytes, int index, int count) => count;
        public override int GetChars(byte[] bytes, int byteIndex, int byteCount, char[] chars, int charIndex) => byteCount;
        public override int GetChars(ReadOnlySpan<byte> bytes, Span<char> chars, bool flush) => chars.Length; // writes nothing
        public override int GetCharCount(ReadOnlySpan<byte> bytes, bool flush) => bytes.Length;
    }

    public sealed class Peek : Encoding
    {
        public override Decoder GetDecoder() => new Blank();
        public override int GetByteCount(char[] chars, int index, int count) => count;
        public override int GetBytes(char[] chars, int charIndex, int charCount, byte[] bytes, int byteIndex) => charCount;
        public override int GetCharCount(byte[] bytes, int index, int count) => count;
        public override int GetChars(byte[] bytes, int byteIndex, int byteCount, char[] chars, int charIndex) => byteCount;
        public override int GetMaxByteCount(int charCount) => charCount;
        public override int GetMaxCharCount(int byteCount) => byteCount;
    }

    public sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(int length, Segment? previous)
        {
            Memory = new byte[length];
            if (previous is not null) { RunningIndex = previous.RunningIndex + previous.Memory.Length; previous.Next = this; }
        }
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var first = new Segment(256, null);
            var second = new Segment(256, first);
            var third = new Segment(256, second);
            var text = new Peek().GetString(new ReadOnlySequence<byte>(first, 0, third, third.Memory.Length));
            state.Value = text.Replace('\0', ' ').Trim();
            state.Count++;
            return state;
        }
    }
}
