// expect: compile-error ES0002: forbidden construct: Escape.Fallback derives from System.Text.DecoderFallback
// Issue 22, red team: a decoder fallback needs no Decoder subclass: Encoding.GetEncoding(name, encoderFallback, decoderFallback) or a
// clone of UTF8 with DecoderFallback set makes the framework's own decoder call the tenant's DecoderFallbackBuffer while it decodes
// into its buffers (Fallback(byte[] bytesUnknown, int index), GetNextChar).
// Outcome: DecoderFallback, DecoderFallbackBuffer (and the encoder ones) are not on the derivation list.
using System;
using System.Text;
using EventSourcing;

namespace Escape
{
    public sealed class Fallback : DecoderFallback
    {
        public override int MaxCharCount => 1;
        public override DecoderFallbackBuffer CreateFallbackBuffer() => new Buffer();
    }

    public sealed class Buffer : DecoderFallbackBuffer
    {
        public override int Remaining => 0;
        public override bool Fallback(byte[] bytesUnknown, int index) => false;
        public override char GetNextChar() => '\0';
        public override bool MovePrevious() => false;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var utf8 = Encoding.GetEncoding("utf-8", EncoderFallback.ReplacementFallback, new Fallback());
            state.Value = utf8.GetString(new byte[] { 0xff, 0xfe, 0x41 });
            return state;
        }
    }
}
