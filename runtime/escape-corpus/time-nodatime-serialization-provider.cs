// expect: compile-error NodaTime.DateTimeZoneProviders.Serialization
// Issue 27 (time): DateTimeZoneProviders.Serialization is a settable process-wide static (obsolete, still there):
// one tenant would choose every tenant's provider.
using System;
using System.Globalization;
using EventSourcing;
using NodaTime;
using NodaTime.Text;
using NodaTime.TimeZones;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            #pragma warning disable CS0618
            DateTimeZoneProviders.Serialization = DateTimeZoneProviders.Tzdb;
            #pragma warning restore CS0618
            return state;
        }
    }
}
