import { notFound } from '../../common/domain-error';
import { ProjectionRecord } from '../../store/projection-catalog.port';
import { WebhookDeliveryLog } from '../../store/webhook-delivery-log.port';
import { StoredProjectionLookup } from '../log/projection-lookup';
import { WebhookDeliveries } from './webhook-deliveries';
import { WebhookEndpoints } from './webhook-endpoints';

const projection = (notifyConfig: string | null): ProjectionRecord => ({
  tenantId: 't',
  projectionId: 'p',
  name: 'n',
  activeVersion: 'v',
  pendingVersion: null,
  createdAt: 0,
  notifyConfig,
});

function setup(p: ProjectionRecord | null) {
  const listing = { list: jest.fn(async () => []) };
  const endpoints = {
    status: jest.fn(async () => ({
      status: 'active' as const,
      pendingDeliveries: 0,
      pendingDeliveriesLimit: 0,
      deadDeliveries: 0,
      suspendedAt: null,
      suspendedReason: null,
      resumeFromSequence: null,
    })),
    resume: jest.fn(async () => ({ afterSequence: 4, skipped: 1 })),
    replay: jest.fn(async () => ({ replayed: 2 })),
  };
  const lookup = { projection: async (_t: string, id: string) => p ?? Promise.reject(notFound(`projection '${id}'`)) };
  jest.spyOn(Date, 'now').mockReturnValue(1234);
  const deliveries = new WebhookDeliveries(
    lookup as unknown as StoredProjectionLookup,
    listing as unknown as WebhookDeliveryLog,
    endpoints as unknown as WebhookEndpoints,
  );
  return { deliveries, listing, endpoints };
}

describe('WebhookDeliveries', () => {
  afterEach(() => jest.restoreAllMocks());

  it('lists, replays and resumes only for an existing projection', async () => {
    const missing = setup(null);
    await expect(missing.deliveries.list('t', 'p', { afterSequence: 0, limit: 10 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(missing.deliveries.replay('t', 'p', null)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(missing.deliveries.resume('t', 'p', undefined)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(missing.listing.list).not.toHaveBeenCalled();
    expect(missing.endpoints.replay).not.toHaveBeenCalled();
    expect(missing.endpoints.resume).not.toHaveBeenCalled();
  });

  it('passes the filter to the listing and the clock to a replay', async () => {
    const { deliveries, listing, endpoints } = setup(projection(null));
    await deliveries.list('t', 'p', { status: 'dead', afterSequence: 3, limit: 10 });
    expect(listing.list).toHaveBeenCalledWith('t', 'p', { status: 'dead', afterSequence: 3, limit: 10 });
    expect(await deliveries.replay('t', 'p', 7)).toEqual({ replayed: 2 });
    expect(endpoints.replay).toHaveBeenCalledWith('t', 'p', 7, 1234);
  });

  it('stamps a resume with the time it was made', async () => {
    const { deliveries, endpoints } = setup(projection(null));
    expect(await deliveries.resume('t', 'p', 3)).toEqual({ afterSequence: 4, skipped: 1, resumedAt: 1234 });
    expect(endpoints.resume).toHaveBeenCalledWith('t', 'p', 3);
  });

  it('answers the endpoint status only for a projection with a webhook', async () => {
    await expect(setup(projection('{"sse":true}')).deliveries.status('t', 'p')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "webhook of projection 'p' not found",
    });
    expect(await setup(projection('{"webhookUrl":"https://x.test"}')).deliveries.status('t', 'p')).toMatchObject({ status: 'active' });
  });
});
