// expect: compile-error NodaTime.Xml.XmlSerializationSettings
// Issue 27 (time): a settable process-wide static (the provider NodaTime's XML serialization uses).
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
            NodaTime.Xml.XmlSerializationSettings.DateTimeZoneProvider = DateTimeZoneProviders.Tzdb;
            return state;
        }
    }
}
