import { DomainError } from '../common/domain-error';
import { InProcessConcurrencyLimiter } from './in-process-concurrency-limiter';
import { InProcessRateLimiter } from './in-process-rate-limiter';
import { TenantLimits } from '../config/quota-policy';
import { StoredEventsGauge } from './stored-events-gauge';
import { TenantLimitsCatalog } from './tenant-limits';
import { TenantQuotas } from './tenant-quotas';

const LIMITS: TenantLimits = {
  appendRequests: { quota: 3, windowSeconds: 60 },
  appendEvents: { quota: 10, windowSeconds: 60 },
  uploads: { quota: 0, windowSeconds: 1 },
  streams: 2,
  webhooksInFlight: 1,
  storedEvents: 12,
  projections: 2,
  keysPerProjection: 3,
  pendingDeliveries: 4,
  eventWebhooks: 5,
};

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('TenantQuotas', () => {
  let heads: Map<string, number>;
  let quotas: TenantQuotas;
  beforeEach(() => {
    heads = new Map();
    const catalog = new TenantLimitsCatalog(
      { getTenant: async () => null, getLimits: async () => null, putLimits: async () => false },
      LIMITS,
      60_000,
    );
    const gauge = new StoredEventsGauge({ headPosition: async (t) => heads.get(t) ?? 0 }, 0);
    quotas = new TenantQuotas(catalog, new InProcessRateLimiter(), new InProcessConcurrencyLimiter(), gauge);
  });

  it('counts append requests per tenant and refuses past the quota with RATE_LIMITED and what the fields need', async () => {
    for (let i = 0; i < 3; i++)
      expect(await quotas.admitAppendRequest('a')).toMatchObject({ policy: 'appends', limit: 3, windowSeconds: 60, remaining: 2 - i });
    const err = await refusal(quotas.admitAppendRequest('a'));
    expect(err).toMatchObject({
      code: 'RATE_LIMITED',
      details: { policy: 'appends', limit: 3, windowSeconds: 60, remaining: 0, retryAfterSeconds: 20 },
    });
    expect(await quotas.admitAppendRequest('b')).toMatchObject({ remaining: 2 });
  });

  it('counts every event of a batch, and refuses a batch the events quota cannot cover', async () => {
    expect(await quotas.admitAppendEvents('a', 8)).toMatchObject({ policy: 'events', unit: 'events', remaining: 2 });
    const err = await refusal(quotas.admitAppendEvents('a', 3));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', details: { policy: 'events', unit: 'events', remaining: 2 } });
    expect(err.message).toContain('this request counts 3');
  });

  it('refuses events past the stored-events cap with QUOTA_EXCEEDED, counting what is stored', async () => {
    heads.set('a', 11);
    const err = await refusal(quotas.admitAppendEvents('a', 2));
    expect(err).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'storedEvents', limit: 12, stored: 11 } });
    expect(await quotas.admitAppendEvents('a', 1)).not.toBeNull();
  });

  it('leaves what has no limit unlimited', async () => {
    for (let i = 0; i < 100; i++) expect(await quotas.admitUpload('a')).toBeNull();
  });

  it('holds streams per tenant until released, refusing past the quota with TOO_MANY_STREAMS scope tenant', async () => {
    const first = await quotas.acquireStream('a');
    await quotas.acquireStream('a');
    expect(await refusal(quotas.acquireStream('a'))).toMatchObject({
      code: 'TOO_MANY_STREAMS',
      details: { scope: 'tenant', limit: 2, policy: 'streams' },
    });
    await quotas.acquireStream('b');
    first();
    first();
    await quotas.acquireStream('a');
    expect(await refusal(quotas.acquireStream('a'))).toMatchObject({ code: 'TOO_MANY_STREAMS' });
  });

  it('lets a tenant have at most its webhooksInFlight attempts at once', async () => {
    const slot = await quotas.acquireWebhookSlot('a');
    expect(slot).not.toBeNull();
    expect(await quotas.acquireWebhookSlot('a')).toBeNull();
    expect(await quotas.acquireWebhookSlot('b')).not.toBeNull();
    slot!();
    expect(await quotas.acquireWebhookSlot('a')).not.toBeNull();
  });
});
