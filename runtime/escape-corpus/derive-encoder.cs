// expect: compile-error ES0002: forbidden construct: Escape.Blank derives from System.Text.Encoder
// Issue 22, red team of the allowlist: the mirror of finding 1. EncodingExtensions.GetBytes(Encoder, ReadOnlySequence<char>, …) and
// Encoder.Convert hand a tenant Encoder spans over byte buffers the framework rented; an override that writes nothing and reports
// a full buffer returns the old bytes.
// Outcome: Encoder is not on the list of framework classes tenant types may derive from.
using System;
using System.Buffers;
using System.Text;
using EventSourcing;

namespace Escape
{
    public sealed class Blank : Encoder
    {
        public override int GetByteCount(char[] chars, int index, int count, bool flush) => count;
        public override int GetBytes(char[] chars, int charIndex, int charCount, byte[] bytes, int byteIndex, bool flush) => charCount;
        public override int GetBytes(ReadOnlySpan<char> chars, Span<byte> bytes, bool flush) => bytes.Length; // writes nothing
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var output = new ArrayBufferWriter<byte>();
            new Blank().Convert(new string(' ', 512).AsSpan(), output.GetSpan(512), true, out _, out var used, out _);
            state.Value = Convert.ToBase64String(output.GetSpan(512)[..used]);
            return state;
        }
    }
}
