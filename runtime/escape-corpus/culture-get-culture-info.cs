// expect: compile-error System.Globalization.CultureInfo.GetCultureInfo
// Issue 27 (time): a named culture. The host runs in invariant globalization mode (predefined cultures only), where
// this passed every check and threw CultureNotFoundException at run time, holding the aggregate. Refused at compile
// time now, naming CultureInfo.InvariantCulture (a culture's data would come from the machine's ICU: not deterministic).
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
            state.Value = 1.5m.ToString(CultureInfo.GetCultureInfo("de-DE"));
            return state;
        }
    }
}
