// expect: compile-error System.Globalization.RegionInfo
// Issue 27 (time): regions are machine data (ICU); not available in invariant mode.
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
            state.Value = new RegionInfo("DE").CurrencySymbol;
            return state;
        }
    }
}
