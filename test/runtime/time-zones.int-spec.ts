import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { realPool, wireEvent } from '../support/runtime-harness';

/**
 * Issue 27 item 5 (time), end to end through the production compiler and a sandboxed executor: the issue's "daily sales
 * per store per Berlin local day" projection written with NodaTime and its bundled tzdb (DateTimeZoneProviders.Tzdb) —
 * keys by local calendar day across midnight and both daylight-saving changes, the same answers on every call — and a
 * named culture refused at compile time with the alternative named, instead of failing at run time. The refusals' corpus
 * cases are runtime/escape-corpus/time-*.cs, timezone-*.cs and culture-*.cs (EscapeCorpusTests, TimeTests).
 */
jest.setTimeout(120_000);

const SOURCE = `using System;
using EventSourcing;
using NodaTime;
using NodaTime.Text;

namespace Sales
{
    public sealed class Day { public decimal Total { get; set; } public int Sales { get; set; } public string LocalDay { get; set; } = ""; public string Tzdb { get; set; } = ""; }

    internal static class Berlin
    {
        public static readonly DateTimeZone Zone = DateTimeZoneProviders.Tzdb["Europe/Berlin"];
        public static LocalDate DayOf(Event e) => Instant.FromDateTimeOffset(e.Timestamp).InZone(Zone).Date;
    }

    public sealed class DailySalesProjection : IProjection<Day>
    {
        public string? ResolveKey(Event e) =>
            e.EventType == "SaleRecorded" ? e.Data.GetProperty("store").GetString() + "/" + LocalDatePattern.Iso.Format(Berlin.DayOf(e)) : null;

        public Day Apply(Day state, Event e)
        {
            state.Total += e.Data.GetProperty("amount").GetDecimal();
            state.Sales++;
            state.LocalDay = Berlin.DayOf(e).ToString("dddd d MMMM uuuu", null);
            state.Tzdb = DateTimeZoneProviders.Tzdb.VersionId;
            return state;
        }
    }
}
`;

let pool: RuntimePool;
let assemblies: Map<string, Buffer>;

beforeAll(() => {
  const r = realPool({ callDeadlineMs: 10_000 });
  pool = r.pool;
  assemblies = r.assemblies;
});
afterAll(() => pool?.close());

function sale(store: string, at: string, amount: number) {
  return { ...wireEvent(`sale-${store}`, 'SaleRecorded', { store, amount }), timestamp: at };
}

it('keys sales by store and Berlin local day with the bundled tzdb, across midnight and both daylight-saving changes', async () => {
  const compiled = await pool.compile([{ path: 'DailySales.cs', content: SOURCE }], 'projection');
  if (!compiled.ok) throw new Error(compiled.compilationError);
  assemblies.set('tenant-a/daily-sales', Buffer.from(compiled.assembly, 'base64'));

  const events = [
    sale('s1', '2025-03-29T22:59:59.000Z', 10), // 23:59:59 CET, Saturday 29 March
    sale('s1', '2025-03-29T23:00:00.000Z', 20), // 00:00 CET, Sunday 30 March (the spring change is at 01:00 UTC)
    sale('s1', '2025-03-30T21:59:00.000Z', 5), // 23:59 CEST, still Sunday 30 March
    sale('s2', '2025-10-25T22:30:00.000Z', 7), // 00:30 CEST, Sunday 26 October (the autumn change is at 01:00 UTC)
    sale('s2', '2025-10-26T22:59:00.000Z', 3), // 23:59 CET, still Sunday 26 October
    sale('s2', '2025-10-26T23:00:00.000Z', 1), // 00:00 CET, Monday 27 October
  ];
  const keys = await pool.resolveKeys('tenant-a', 'daily-sales', 'Sales.DailySalesProjection', events);
  expect(keys).toEqual(['s1/2025-03-29', 's1/2025-03-30', 's1/2025-03-30', 's2/2025-10-26', 's2/2025-10-26', 's2/2025-10-27']);

  // Fold each key's events in order, as its lane would.
  const byKey = new Map<string, typeof events>();
  keys.forEach((k, i) => byKey.set(k as string, [...(byKey.get(k as string) ?? []), events[i]]));
  const groups = [...byKey.values()].map((evs) => ({ state: null, events: evs, lastStateOnly: true }));
  const run = () => pool.apply('tenant-a', 'daily-sales', 'Sales.DailySalesProjection', groups);
  const first = await run();
  const again = await run();
  expect(first.every((r) => r.ok)).toBe(true);
  const days = first.map((r) => JSON.parse(r.states[r.states.length - 1]));
  expect(days.map((d) => [d.localDay, d.total, d.sales])).toEqual([
    ['Saturday 29 March 2025', 10, 1],
    ['Sunday 30 March 2025', 25, 2],
    ['Sunday 26 October 2025', 10, 2],
    ['Monday 27 October 2025', 1, 1],
  ]);
  // The tzdb is the one embedded in the NodaTime package (docs/csharp.md names its version).
  expect(days[0].tzdb).toMatch(/^TZDB: 20\d\d[a-z]/);
  // Nothing carried from one call to the next: the same answers again.
  expect(again.map((r) => r.states)).toEqual(first.map((r) => r.states));
});

it('refuses a named culture at compile time, naming the alternative, instead of failing at run time', async () => {
  const source = SOURCE.replace(
    'state.Sales++;',
    'state.Sales++; state.LocalDay = 1.5m.ToString(System.Globalization.CultureInfo.GetCultureInfo("de-DE"));',
  );
  const compiled = await pool.compile([{ path: 'DailySales.cs', content: source }], 'projection');
  expect(compiled.ok).toBe(false);
  if (compiled.ok) return;
  expect(compiled.compilationError).toMatch(
    /DailySales\.cs\(\d+,\d+\): error ES0001: forbidden API: System\.Globalization\.CultureInfo\.GetCultureInfo \(.*use CultureInfo\.InvariantCulture\)/,
  );
});
