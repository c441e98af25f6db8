// expect: runtime-isolated
// Issue 27 (time): the cultures a tenant can still have are the invariant one and its clones (Clone() gives a writable
// copy). NodaTime keeps a format info per culture in a process-wide cache (up to 500), each with its own pattern caches:
// a new clone per call would add one each time. Emptied before every call (Execution/NodaTimeCaches), and a clone is the
// tenant's own object, reachable by nobody else. Outcome: its changed minus sign shows in its own output only.
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
            var mine = (CultureInfo)CultureInfo.InvariantCulture.Clone();
            mine.NumberFormat.NegativeSign = "~" + state.Count;
            state.Count++;
            var text = Offset.FromHours(-2).ToString("m", mine) + LocalDatePattern.Create("uuuu", mine).Format(new LocalDate(2025, 1, 1));
            state.Value = text.Length > 0 ? "mine" : "";
            return state;
        }
    }
}
