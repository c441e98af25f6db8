// expect: compile-error ES0002: forbidden construct: Escape.Spy implements System.ICustomFormatter
// Issue 22 red team: IFormattable is on the list, so string.Format(provider, ...) and interpolation hand a tenant's
// IFormatProvider/ICustomFormatter the format, the argument and (for ISpanFormattable arguments, the framework's own
// types included) a chance to run while the framework's pooled ValueStringBuilder holds the text built so far. Neither
// interface is on the list: refused at compile time.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : IFormatProvider, ICustomFormatter
    {
        public object? GetFormat(Type? formatType) => this;
        public string Format(string? format, object? arg, IFormatProvider? formatProvider) => "";
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = string.Format(new Spy(), "{0}{1}", e.Version, state.Value);
            return state;
        }
    }
}
