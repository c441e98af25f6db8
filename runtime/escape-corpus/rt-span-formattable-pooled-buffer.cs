// expect: compile-error ES0002: forbidden construct: Escape.Peeker implements System.ISpanFormattable
// Red team (issue 10): an interpolated string hands an ISpanFormattable's TryFormat the free part of a buffer rented from
// ArrayPool<char>.Shared (string.Format: uninitialized stack memory). TryFormat read what earlier calls and the host had
// left there ("SECRET-<previous event id>" plus host digits) and wrote past what it reported: state across calls.
// Outcome: tenant types may not implement ISpanFormattable/IUtf8SpanFormattable (IFormattable is fine).
using EventSourcing;

namespace Escape
{
    public sealed class Box { public string Seen = ""; }

    public sealed class Peeker(Box box, string leave) : System.ISpanFormattable
    {
        public bool TryFormat(System.Span<char> dest, out int written, System.ReadOnlySpan<char> format, System.IFormatProvider? p)
        {
            box.Seen = new string(dest[..System.Math.Min(dest.Length, 40)]);
            leave.AsSpan().CopyTo(dest);
            written = 0;
            return true;
        }
        public string ToString(string? f, System.IFormatProvider? p) => "";
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var box = new Box();
            _ = $"{new Peeker(box, "SECRET-" + e.EventId)}";
            state.Value = box.Seen;
            return state;
        }
    }
}
