import { RawJson } from '../../common/raw-json';
import { WireEvent } from '../host/runtime-protocol';

/**
 * The executors' warm-up at service start (shared isolation). A host's first load of an assembly and
 * its first Apply/ResolveKey pay the .NET JIT for the host's own load, JSON and call paths: measured
 * after a restart, the first four tenants' first appends took ~380 ms each, every later cold tenant
 * ≤ 150 ms (`BENCH_PARTS=cold node dist/bench/tenants.bench.js`). So before readiness each executor
 * loads this built-in reducer and projection under a tenant id no request can name (it holds a NUL,
 * which the request-target check refuses) and runs each once; the assembly is then dropped.
 */
export const WARM_UP_TENANT = '\u0000warm-up';
export const WARM_UP_ASSEMBLY = 'warm-up';

export const WARM_UP_SOURCES = [
  {
    path: 'WarmUp.cs',
    content: `
using System.Collections.Generic;
using System.Linq;
using EventSourcing;

namespace WarmUp
{
    public sealed record Line(string Sku, int Qty, decimal Price);
    public sealed record Placed(string CustomerId, List<Line> Lines);

    public sealed class Totals
    {
        public string CustomerId { get; set; } = "";
        public int Count { get; set; }
        public decimal Amount { get; set; }
        public Dictionary<string, decimal> Orders { get; set; } = new();
    }

    [AggregateType("warm-up")]
    public sealed class WarmUpReducer : IReducer<Totals>
    {
        public Totals Apply(Totals state, Event e)
        {
            var placed = e.DataAs<Placed>();
            var amount = placed.Lines.Sum(l => l.Qty * l.Price);
            state.CustomerId = placed.CustomerId;
            state.Count++;
            state.Amount += amount;
            state.Orders[e.AggregateId] = amount;
            return state;
        }
    }

    [ProjectionName("warm-up")]
    public sealed class WarmUpProjection : IProjection<Totals>
    {
        public string? ResolveKey(Event e) => e.DataAs<Placed>().CustomerId;

        public Totals Apply(Totals state, Event e) => new WarmUpReducer().Apply(state, e);
    }
}
`,
  },
];

export function warmUpEvent(): WireEvent {
  return {
    eventId: '00000000-0000-7000-8000-000000000000',
    aggregateId: 'warm-up-1',
    aggregateType: 'warm-up',
    eventType: 'Placed',
    version: 1,
    timestamp: new Date(0).toISOString(),
    data: new RawJson('{"customerId":"c-1","lines":[{"sku":"x","qty":2,"price":1.25}]}'),
    metadata: null,
    correlationId: null,
    causationId: null,
  };
}
