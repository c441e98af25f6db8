import { RawJson } from '../../common/raw-json';
import { CompilerPool } from '../compiler/compiler-pool';
import { BatchItem, WireEvent } from '../host/runtime-protocol';
import { Executor } from './executor';

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

/** The warm-up upload, compiled: its assembly and the classes to call. */
export interface WarmUpAssembly {
  assembly: Buffer;
  reducer: string;
  projection: string;
}

/** What a warm-up call is given (the pool's own limits). */
export interface WarmUpLimits {
  callDeadlineMs: number;
  maxStateBytes: number;
  maxResultBytes: number;
  maxKeyLength: number;
}

/** The built-in warm-up upload, compiled once (RuntimePool serves its assembly to the executors). */
export async function compileWarmUp(compilers: Pick<CompilerPool, 'compile'>): Promise<WarmUpAssembly> {
  const compiled = await compilers.compile(WARM_UP_SOURCES);
  if (!compiled.ok) throw new Error(`the warm-up sources did not compile: ${compiled.compilationError}`);
  const className = (suffix: string) => compiled.discovered.find((d) => d.className.endsWith(suffix))!.className;
  return {
    assembly: Buffer.from(compiled.assembly, 'base64'),
    reducer: className('WarmUpReducer'),
    projection: className('WarmUpProjection'),
  };
}

/** Loads the warm-up into each executor, runs its reducer and its projection's key once, and drops it. */
export async function runWarmUp(executors: Executor[], warm: WarmUpAssembly, limits: WarmUpLimits): Promise<void> {
  const run = (ex: Executor, item: BatchItem) =>
    new Promise((resolve, reject) =>
      ex.submit({
        tenantId: WARM_UP_TENANT,
        assemblyId: WARM_UP_ASSEMBLY,
        item,
        deadlineMs: limits.callDeadlineMs,
        resolve,
        reject,
        reruns: 0,
      }),
    );
  const { maxStateBytes, maxResultBytes, maxKeyLength } = limits;
  await Promise.all(
    executors.map(async (ex) => {
      await run(ex, {
        op: 'apply',
        assemblyId: WARM_UP_ASSEMBLY,
        className: warm.reducer,
        groups: [{ state: null, events: [warmUpEvent()] }],
        maxStateBytes,
        maxResultBytes,
      });
      await run(ex, { op: 'resolveKeys', assemblyId: WARM_UP_ASSEMBLY, className: warm.projection, events: [warmUpEvent()], maxKeyLength });
      ex.forget(WARM_UP_TENANT, WARM_UP_ASSEMBLY);
    }),
  );
}
