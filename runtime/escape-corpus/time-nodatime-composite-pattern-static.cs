// expect: compile-error Zones.Any
// Issue 27 (time): static readonly NodaTime patterns are allowed, but not IPattern<T>: a composite pattern keeps the
// tenant's delegates (a closure could carry state from call to call).
using System;
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;
using NodaTime.TimeZones;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    static class Zones { static int calls; public static readonly IPattern<LocalDate> Any = new CompositePatternBuilder<LocalDate> { { LocalDatePattern.Iso, d => ++calls > 0 } }.Build(); }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = Zones.Any.Format(new LocalDate(2025, 1, 1));
            return state;
        }
    }
}
