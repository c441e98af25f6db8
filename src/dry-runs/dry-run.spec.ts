import { EventLog, StoredEvent } from '../store/event-log.port';
import { LaneReads } from '../store/lanes/lane-reads.port';
import { ApplyGroupPayload, ApplyGroupResult, ResolvedKey, WireEvent } from '../tenant-code/host/runtime-protocol';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { DryRunLimits, DryRunOptions } from './dry-run-options';
import { DryRunProgress } from './history-replay';
import { ProjectionDryRun } from './projection-dry-run';
import { ReducerDryRun } from './reducer-dry-run';

/**
 * The dry runs' logic over a scripted TenantCode: `live` sums each key's `n`; `cand` (the candidate)
 * doubles a Big event's `n`, throws on Boom and resolves a `Other` event to a key of its own.
 */
class ScriptedCode implements TenantCode {
  readonly calls: { assemblyId: string; groups: number; events: number }[] = [];

  async apply(_t: string, assemblyId: string, _c: string, groups: ApplyGroupPayload[]): Promise<ApplyGroupResult[]> {
    this.calls.push({ assemblyId, groups: groups.length, events: groups.reduce((n, g) => n + g.events.length, 0) });
    return groups.map((g) => {
      let s = g.state ? JSON.parse(g.state.text) : { n: 0 };
      const states: string[] = [];
      for (const [i, e] of g.events.entries()) {
        const data = JSON.parse(e.data.text);
        // The candidate removes a key on Close (IDeletableProjection: the host answers the text null).
        if (assemblyId === 'cand' && e.eventType === 'Close') {
          states.push('null');
          s = { n: 0 };
          continue;
        }
        if (assemblyId === 'cand' && e.eventType === 'Boom')
          return {
            ok: false,
            failedIndex: i,
            states,
            error: { code: 'APPLY_FAILED', message: 'boom', exceptionType: 'System.InvalidOperationException' },
          };
        s.n += assemblyId === 'cand' && e.eventType === 'Big' ? data.n * 2 : data.n;
        states.push(JSON.stringify(s));
      }
      return { ok: true, states };
    });
  }

  async resolveKeys(_t: string, assemblyId: string, _c: string, events: WireEvent[]): Promise<ResolvedKey[]> {
    return events.map((e) => {
      const data = JSON.parse(e.data.text);
      if (e.eventType === 'Unkeyed') return null;
      if (e.eventType === 'BadKey') return { error: { code: 'RESOLVE_FAILED', message: 'no key', stackTrace: 'at Host.Internals' } };
      if (e.eventType === 'LongKey') return 'k'.repeat(2_000);
      if (assemblyId === 'cand' && e.eventType === 'Other') return 'other';
      if (e.eventType === 'Twice') return [data.key, `${data.key}-copy`];
      return data.key;
    });
  }

  async unload(): Promise<void> {}
}

function logOf(
  events: Omit<StoredEvent, 'eventId' | 'version' | 'timestamp' | 'metadata' | 'correlationId' | 'causationId' | 'position' | 'data'>[],
  data: object[],
) {
  const all: StoredEvent[] = events.map((e, i) => ({
    ...e,
    position: i + 1,
    eventId: `e${i + 1}`,
    version: 1,
    timestamp: 0,
    data: JSON.stringify(data[i]),
    metadata: null,
    correlationId: null,
    causationId: null,
  }));
  const log = {
    readAll: async (_t: string, after: number, limit: number) => all.filter((e) => e.position > after).slice(0, limit),
    readLog: async (_t: string, q: { afterPosition: number; limit: number; aggregateTypes?: string[] }) =>
      all
        .filter((e) => e.position > q.afterPosition && (!q.aggregateTypes || q.aggregateTypes.includes(e.aggregateType)))
        .slice(0, q.limit),
    headPosition: async () => all.length,
  } as unknown as EventLog;
  return log;
}

const LIMITS: DryRunLimits = { maxEvents: 1_000, maxKeys: 1_000, maxStateBytes: 1 << 20, maxDurationMs: 60_000 };
const OPTIONS: DryRunOptions = { maxEvents: 1_000, fromPosition: 1, toPosition: null, keys: null, sampleKeys: null, className: null };
const progress = (): DryRunProgress => ({ eventsRead: 0, keysSeen: 0, position: 0 });

const ev = (aggregateId: string, eventType: string, aggregateType = 'order') => ({ aggregateId, aggregateType, eventType });

describe('ProjectionDryRun', () => {
  const history = () =>
    logOf(
      [ev('o1', 'Add'), ev('o2', 'Add'), ev('o1', 'Big'), ev('o3', 'Boom'), ev('o3', 'Add'), ev('o4', 'Other'), ev('o5', 'Unkeyed')],
      [{ key: 'a', n: 1 }, { key: 'b', n: 2 }, { key: 'a', n: 10 }, { key: 'c', n: 1 }, { key: 'c', n: 1 }, { key: 'd', n: 4 }, { n: 1 }],
    );
  // What the live version's lanes hold: the same code without the candidate's changes, plus a key it no longer makes.
  const liveLanes = (states: Record<string, unknown>) =>
    ({
      listLanes: async (_v: unknown, o: { afterKey: string; limit: number }) =>
        Object.entries(states)
          .filter(([k]) => k > o.afterKey)
          .slice(0, o.limit)
          .map(([key, s]) => ({
            key,
            state: JSON.stringify(s),
            appliedPosition: 7,
            updatedAt: 0,
            heldPosition: null,
            heldError: null,
            attempts: 0,
          })),
    }) as unknown as LaneReads;

  it('reports keys changed, added, removed and unchanged, diffs, and failures by event type with the first failing event', async () => {
    const code = new ScriptedCode();
    const run = new ProjectionDryRun(history(), liveLanes({ a: { n: 11 }, b: { n: 2 }, c: { n: 2 }, d: { n: 4 } }), code);
    const p = progress();
    const report = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: 'v1',
      options: OPTIONS,
      limits: LIMITS,
      progress: p,
    });
    expect(report.keys).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1, held: 1 });
    expect(report.diffs).toEqual([
      { key: 'a', change: 'changed', patch: [{ op: 'replace', path: '/n', value: 21 }] },
      { key: 'd', change: 'removed', patch: [{ op: 'remove', path: '' }] },
      { key: 'other', change: 'added', patch: [{ op: 'add', path: '', value: { n: 4 } }] },
    ]);
    expect(report.failures).toEqual([
      {
        eventType: 'Boom',
        count: 1,
        first: {
          eventId: 'e4',
          position: 4,
          aggregateId: 'o3',
          key: 'c',
          code: 'APPLY_FAILED',
          message: 'boom',
          exceptionType: 'System.InvalidOperationException',
        },
      },
    ]);
    expect(report).toMatchObject({
      truncated: false,
      truncatedReason: null,
      compared: 'all',
      eventsRead: 7,
      range: { fromPosition: 1, toPosition: 7 },
    });
    // The held key's later event was not applied: 1 (a) + 1 (b) + 1 (a) + 0 of c's two + 1 (other).
    expect(report.eventsApplied).toBe(4);
    expect(p).toEqual({ eventsRead: 7, keysSeen: 4, position: 7 });
  });

  it('stops at maxEvents with truncated: true, comparing only the keys it folded', async () => {
    const run = new ProjectionDryRun(history(), liveLanes({ a: { n: 11 }, b: { n: 2 } }), new ScriptedCode());
    const report = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: 'v1',
      options: { ...OPTIONS, maxEvents: 2 },
      limits: LIMITS,
      progress: progress(),
    });
    expect(report).toMatchObject({ truncated: true, truncatedReason: 'maxEvents', compared: 'touched', eventsRead: 2 });
    // The live states are at the head: key a, cut after its first event, differs from the live one; d is not counted removed.
    expect(report.keys).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1, held: 0 });
  });

  it('counts a key the candidate removes as removed, in a partial run too, and only that one', async () => {
    const log = logOf(
      [ev('o1', 'Add'), ev('o2', 'Add'), ev('o1', 'Close'), ev('o2', 'Add')],
      [{ key: 'a', n: 1 }, { key: 'b', n: 2 }, { key: 'a' }, { key: 'b', n: 1 }],
    );
    const run = new ProjectionDryRun(log, liveLanes({ a: { n: 1 }, b: { n: 2 }, z: { n: 9 } }), new ScriptedCode());
    const report = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: 'v1',
      options: { ...OPTIONS, maxEvents: 3 },
      limits: LIMITS,
      progress: progress(),
    });
    expect(report).toMatchObject({ truncated: true, compared: 'touched' });
    // a removed by the candidate; b unchanged at its third event; z untouched by a partial run: not counted.
    expect(report.keys).toEqual({ added: 0, removed: 1, changed: 0, unchanged: 1, held: 0 });
    expect(report.diffs).toEqual([{ key: 'a', change: 'removed', patch: [{ op: 'remove', path: '' }] }]);
  });

  it('stops before passing maxKeys', async () => {
    const run = new ProjectionDryRun(history(), liveLanes({}), new ScriptedCode());
    const report = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: null,
      options: OPTIONS,
      limits: { ...LIMITS, maxKeys: 2 },
      progress: progress(),
    });
    expect(report).toMatchObject({ truncated: true, truncatedReason: 'maxKeys', baseline: null });
  });

  it('folds only the keys asked for, and each key of a several-keys event', async () => {
    const log = logOf(
      [ev('o1', 'Twice'), ev('o2', 'Add')],
      [
        { key: 'x', n: 3 },
        { key: 'y', n: 1 },
      ],
    );
    const run = new ProjectionDryRun(log, liveLanes({}), new ScriptedCode());
    const all = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: null,
      options: OPTIONS,
      limits: LIMITS,
      progress: progress(),
    });
    expect(all.diffs.map((d) => d.key)).toEqual(['x', 'x-copy', 'y']);
    const some = await run.run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: null,
      options: { ...OPTIONS, keys: ['x-copy'] },
      limits: LIMITS,
      progress: progress(),
    });
    expect(some.diffs.map((d) => d.key)).toEqual(['x-copy']);
    expect(some.compared).toBe('touched');
  });
});

describe('ProjectionDryRun routing', () => {
  it('reports a ResolveKey that throws, or a key the lanes refuse, as a failure of its event (key null), without host frames', async () => {
    const log = logOf([ev('o1', 'BadKey'), ev('o2', 'LongKey'), ev('o3', 'Add')], [{}, {}, { key: 'a', n: 1 }]);
    const lanes = { listLanes: async () => [] } as unknown as LaneReads;
    const report = await new ProjectionDryRun(log, lanes, new ScriptedCode()).run({
      tenantId: 't',
      assemblyId: 'cand',
      className: 'P',
      liveVersionId: null,
      options: OPTIONS,
      limits: LIMITS,
      progress: progress(),
    });
    expect(report.failures).toEqual([
      {
        eventType: 'BadKey',
        count: 1,
        first: { eventId: 'e1', position: 1, aggregateId: 'o1', key: null, code: 'RESOLVE_FAILED', message: 'no key' },
      },
      {
        eventType: 'LongKey',
        count: 1,
        first: expect.objectContaining({
          eventId: 'e2',
          key: null,
          code: 'KEY_TOO_LONG',
          message: expect.stringContaining('at most 1024 bytes'),
        }),
      },
    ]);
    expect(report.keys).toMatchObject({ added: 1, held: 0 });
  });
});

describe('ReducerDryRun', () => {
  it('folds each aggregate of the type with the candidate and with the bound reducer, and compares', async () => {
    const log = logOf(
      [ev('o1', 'Add'), ev('x', 'Add', 'other'), ev('o1', 'Big'), ev('o2', 'Add'), ev('o3', 'Boom')],
      [{ n: 1 }, { n: 1 }, { n: 5 }, { n: 2 }, { n: 1 }],
    );
    const code = new ScriptedCode();
    const report = await new ReducerDryRun(log, code).run({
      tenantId: 't',
      aggregateType: 'order',
      assemblyId: 'cand',
      className: 'R',
      bound: { reducerId: 'live', className: 'R' },
      options: OPTIONS,
      limits: LIMITS,
      progress: progress(),
    });
    expect(report.keys).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1, held: 1 });
    expect(report.diffs).toEqual([{ key: 'o1', change: 'changed', patch: [{ op: 'replace', path: '/n', value: 11 }] }]);
    expect(report.failures.map((f) => [f.eventType, f.first.aggregateId])).toEqual([['Boom', 'o3']]);
    expect(report.baseline).toEqual({ reducerId: 'live', className: 'R' });
    // The other type's aggregate was never read.
    expect(report.eventsRead).toBe(4);
    expect(new Set(code.calls.map((c) => c.assemblyId))).toEqual(new Set(['cand', 'live']));
  });
});
