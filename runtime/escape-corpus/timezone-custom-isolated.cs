// expect: runtime-isolated
// Issue 27 (time): custom zones (CreateCustomTimeZone with adjustment rules) read nothing of the machine and fill no
// cache: TimeZoneInfo keeps custom zones nowhere (only FindSystemTimeZoneById's results, refused). The conversions that
// take a DateTime of kind Unspecified/Local as "local" see UTC: the host pins TZ=UTC before any request (HostSetup), so
// the answer is the same on every machine. Outcome: the values depend on the event only.
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
            var start = TimeZoneInfo.TransitionTime.CreateFloatingDateRule(new DateTime(1, 1, 1, 2, 0, 0), 3, 5, DayOfWeek.Sunday);
            var end = TimeZoneInfo.TransitionTime.CreateFloatingDateRule(new DateTime(1, 1, 1, 3, 0, 0), 10, 5, DayOfWeek.Sunday);
            var rule = TimeZoneInfo.AdjustmentRule.CreateAdjustmentRule(DateTime.MinValue.Date, DateTime.MaxValue.Date, TimeSpan.FromHours(1), start, end);
            var zone = TimeZoneInfo.CreateCustomTimeZone("Tenant/Zone" + state.Count, TimeSpan.FromHours(1), "z", "s", "d", new[] { rule });
            var again = TimeZoneInfo.FromSerializedString(zone.ToSerializedString());
            var local = TimeZoneInfo.ConvertTime(new DateTime(2025, 7, 1, 12, 0, 0), zone);
            state.Count++;
            state.Value = local.Hour == 14 && again.HasSameRules(zone) ? "mine" : "machine-dependent " + local.Hour;
            return state;
        }
    }
}
