// expect: compile-error ES0002: forbidden construct: Escape.Spy derives from System.IO.TextWriter
// Issue 22, red team: TextWriter.Write(ReadOnlySpan<char>) is called by the framework with slices of its pooled buffers
// (TextWriter.Write(string format, …), interpolated-string writes), and TextReader.Read(Span<char>) by readers with rented ones.
// Outcome: refused twice over (System.IO denied; TextWriter/TextReader not on the derivation list).
using System;
using System.IO;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : TextWriter
    {
        public string Seen = "";
        public override System.Text.Encoding Encoding => System.Text.Encoding.UTF8;
        public override void Write(ReadOnlySpan<char> buffer) => Seen += buffer.ToString();
    }

    public sealed class Source : TextReader
    {
        public override int Read(Span<char> buffer) => buffer.Length; // writes nothing
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var spy = new Spy();
            spy.Write("{0} {1}", e.EventId, new Source().ReadToEnd());
            state.Value = spy.Seen;
            return state;
        }
    }
}
