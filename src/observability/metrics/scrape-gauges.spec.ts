import { Registry } from 'prom-client';
import { parseScrape } from '../../../test/support/prometheus-text';
import { VersionGauges } from '../../store/lanes/lane-records';
import { ScrapeGauges, ScrapeSources, versionSamples } from './scrape-gauges';

const row = (over: Partial<VersionGauges> = {}): VersionGauges => ({
  tenantId: 't1',
  projectionId: 'p1',
  versionId: 'v1',
  role: 'active',
  headPosition: 10,
  routedPosition: 8,
  appliedPosition: 5,
  inboxRows: 3,
  heldLanes: 1,
  laneCount: 4,
  oldestUnappliedAt: 1_000,
  notificationHead: 7,
  ...over,
});

function setup(versions: () => Promise<VersionGauges[]>) {
  let now = 10_000;
  let storeReads = 0;
  const sources: ScrapeSources = {
    versionGauges: () => {
      storeReads++;
      return versions();
    },
    pendingCompiles: async () => 2,
    executors: () => [{ pid: 11, loaded: 3 }, { loaded: 0 }, { pid: 12, loaded: 1 }],
    streams: () => ({ websocket: 4, sse: 1 }),
  };
  const registry = new Registry();
  new ScrapeGauges(registry, sources, () => now);
  return {
    scrape: async () => parseScrape(await registry.metrics()),
    advance: (ms: number) => (now += ms),
    reads: () => storeReads,
  };
}

describe('versionSamples', () => {
  it('counts lag from the applied position, inbox depth as rows plus unrouted events, age in seconds', () => {
    expect(versionSamples(row(), 4_000)).toEqual({
      labels: { tenant: 't1', projection: 'p1', version: 'active' },
      lagEvents: 5,
      oldestUnappliedAgeSeconds: 3,
      inboxDepth: 5,
      heldLanes: 1,
      laneCount: 4,
    });
    expect(versionSamples(row({ appliedPosition: 10, routedPosition: 10, inboxRows: 0, oldestUnappliedAt: null }), 4_000)).toMatchObject({
      lagEvents: 0,
      oldestUnappliedAgeSeconds: 0,
      inboxDepth: 0,
    });
  });
});

describe('ScrapeGauges', () => {
  it('reads every projection gauge from one store call per scrape, shared for a second', async () => {
    const g = setup(async () => [row(), row({ versionId: 'v2', role: 'pending', appliedPosition: 0, oldestUnappliedAt: 9_000 })]);
    const s = await g.scrape();
    expect(g.reads()).toBe(1);
    expect(s.series('eventstore_projection_lag_events')).toEqual([
      { labels: { tenant: 't1', projection: 'p1', version: 'active' }, value: 5 },
      { labels: { tenant: 't1', projection: 'p1', version: 'pending' }, value: 10 },
    ]);
    expect(s.sum('eventstore_projection_oldest_unapplied_age_seconds', { version: 'active' })).toBe(9);
    expect(s.sum('eventstore_projection_oldest_unapplied_age_seconds', { version: 'pending' })).toBe(1);
    expect(s.sum('eventstore_projection_held_lanes', { version: 'active' })).toBe(1);
    expect(s.sum('eventstore_projection_lanes', { version: 'active' })).toBe(4);
    expect(s.sum('eventstore_projection_inbox_depth', { version: 'active' })).toBe(5);
    expect(s.series('eventstore_notification_log_head')).toEqual([{ labels: { tenant: 't1', projection: 'p1' }, value: 7 }]);
    expect(s.sum('eventstore_compile_queue_depth')).toBe(2);
    expect(s.sum('eventstore_executor_processes')).toBe(2);
    expect(s.sum('eventstore_executor_loaded_assemblies')).toBe(4);
    expect(s.sum('eventstore_stream_connections', { transport: 'websocket' })).toBe(4);
    expect(s.sum('eventstore_stream_connections', { transport: 'sse' })).toBe(1);

    g.advance(500);
    await g.scrape();
    expect(g.reads()).toBe(1);
    g.advance(600);
    await g.scrape();
    expect(g.reads()).toBe(2);
  });

  it('drops the series of a version gone since the last scrape', async () => {
    let versions = [row(), row({ projectionId: 'p2', versionId: 'v9' })];
    const g = setup(async () => versions);
    expect((await g.scrape()).series('eventstore_projection_lanes')).toHaveLength(2);
    versions = [row()];
    g.advance(1_000);
    expect((await g.scrape()).series('eventstore_projection_lanes')).toHaveLength(1);
  });

  it('keeps the last values when the store cannot be read, and the scrape still answers', async () => {
    let fail = false;
    const g = setup(async () => {
      if (fail) throw new Error('store down');
      return [row()];
    });
    await g.scrape();
    fail = true;
    g.advance(1_000);
    const s = await g.scrape();
    expect(g.reads()).toBe(2);
    expect(s.sum('eventstore_projection_lag_events')).toBe(5);
    expect(s.sum('eventstore_executor_processes')).toBe(2);
  });
});
