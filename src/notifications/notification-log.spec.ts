import { notFound } from '../common/domain-error';
import { ProjectionRecord } from '../store/projection-repository.port';
import { NotificationLog } from './notification-log';

describe('NotificationLog', () => {
  it('reads the page of an existing projection, and nothing for an unknown one', async () => {
    const p = { projectionId: 'p' } as ProjectionRecord;
    const read = jest.fn(async () => []);
    const log = new NotificationLog(
      { projection: async (_t, id) => (id === 'p' ? p : Promise.reject(notFound(`projection '${id}'`))) },
      { read },
    );
    expect(await log.page('t', 'p', { afterSequence: 5, limit: 20 })).toEqual([]);
    expect(read).toHaveBeenCalledWith('t', 'p', 5, 20);
    await expect(log.page('t', 'q', { afterSequence: 0, limit: 20 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(read).toHaveBeenCalledTimes(1);
  });
});
