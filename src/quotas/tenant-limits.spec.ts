import { TenantLimitsRecord, TenantRecord } from '../store/tenant-repository.port';
import { TenantLimits } from '../config/quota-policy';
import { TenantLimitsCatalog } from './tenant-limits';

/** In-memory limits rows: what is under test is the catalog's caching and merging, not a store. */
class MemoryLimits {
  tenants = new Set(['t1', 't2']);
  rows = new Map<string, TenantLimitsRecord>();
  reads = 0;
  async getTenant(id: string): Promise<TenantRecord | null> {
    return this.tenants.has(id) ? { tenantId: id, name: id, createdAt: 0 } : null;
  }
  async getLimits(id: string) {
    this.reads++;
    return this.rows.get(id) ?? null;
  }
  async putLimits(r: TenantLimitsRecord) {
    if (!this.tenants.has(r.tenantId)) return false;
    this.rows.set(r.tenantId, r);
    return true;
  }
}

const DEFAULTS: TenantLimits = {
  appendRequests: { quota: 100, windowSeconds: 1 },
  appendEvents: { quota: 1000, windowSeconds: 1 },
  uploads: { quota: 60, windowSeconds: 3600 },
  streams: 50,
  webhooksInFlight: 4,
  storedEvents: 0,
  projections: 100,
  keysPerProjection: 100_000,
  pendingDeliveries: 10_000,
  eventWebhooks: 10,
};

describe('TenantLimitsCatalog', () => {
  let now: number;
  let repo: MemoryLimits;
  let catalog: TenantLimitsCatalog;
  beforeEach(() => {
    now = 1_000;
    repo = new MemoryLimits();
    catalog = new TenantLimitsCatalog(repo, DEFAULTS, 5_000, () => now);
  });

  it('gives a tenant without overrides the defaults, and one with them the overrides on top', async () => {
    expect(await catalog.limitsOf('t1')).toEqual(DEFAULTS);
    await catalog.replace('t2', { streams: 2, appendRequests: { quota: 5, windowSeconds: 10 } });
    expect(await catalog.limitsOf('t2')).toEqual({ ...DEFAULTS, streams: 2, appendRequests: { quota: 5, windowSeconds: 10 } });
    expect(await catalog.view('t2')).toMatchObject({ overrides: { streams: 2 }, defaults: DEFAULTS, updatedAt: 1_000 });
  });

  it('reads the store once per cache period: a change made elsewhere shows when the period is over', async () => {
    await catalog.limitsOf('t1');
    await catalog.limitsOf('t1');
    expect(repo.reads).toBe(1);
    // Changed elsewhere (CLI, another instance).
    repo.rows.set('t1', { tenantId: 't1', limits: '{"streams":1}', updatedAt: now });
    now += 4_999;
    expect((await catalog.limitsOf('t1')).streams).toBe(50);
    now += 1;
    expect((await catalog.limitsOf('t1')).streams).toBe(1);
    expect(repo.reads).toBe(2);
  });

  it('keeps the limits it has while the store fails to answer', async () => {
    await catalog.replace('t1', { streams: 7 });
    await catalog.limitsOf('t1');
    repo.getLimits = async () => {
      throw new Error('store down');
    };
    now += 10_000;
    expect((await catalog.limitsOf('t1')).streams).toBe(7);
    await expect(catalog.limitsOf('t2')).rejects.toThrow('store down');
  });

  it('applies a change made here at once', async () => {
    await catalog.limitsOf('t1');
    await catalog.replace('t1', { webhooksInFlight: 1 });
    expect((await catalog.limitsOf('t1')).webhooksInFlight).toBe(1);
    await catalog.replace('t1', {});
    expect(await catalog.limitsOf('t1')).toEqual(DEFAULTS);
  });

  it('reads a burst of first requests once', async () => {
    await Promise.all(Array.from({ length: 20 }, () => catalog.limitsOf('t1')));
    expect(repo.reads).toBe(1);
  });

  it('refuses an unknown tenant and a bad override, changing nothing', async () => {
    await expect(catalog.replace('nobody', {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(catalog.view('nobody')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(catalog.replace('t1', { streams: 'many' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'streams' },
    });
    expect(repo.rows.size).toBe(0);
  });

  it('passes over a stored limit this version does not know', async () => {
    repo.rows.set('t1', { tenantId: 't1', limits: '{"streams":3,"futureLimit":9}', updatedAt: 1 });
    expect((await catalog.limitsOf('t1')).streams).toBe(3);
  });
});
