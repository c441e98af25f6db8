import { notFound } from '../../common/domain-error';
import { ProjectionRecord } from '../../store/projection-catalog.port';
import { TENANT_SCOPE } from '../../store/webhook-records';
import { WebhookSecretRotation } from './webhook-secret-rotation';

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
  const rotate = jest.fn(async (_t: string, _scope: string) => ({ secret: 's2', rotatedAt: 9 }));
  const rotation = new WebhookSecretRotation(
    { projection: async (_t, id) => p ?? Promise.reject(notFound(`projection '${id}'`)) },
    { rotate },
  );
  return { rotation, rotate };
}

describe('WebhookSecretRotation', () => {
  it('rotates the own secret of a projection that has an isolated one', async () => {
    const { rotation, rotate } = setup(projection('{"webhookUrl":"https://x.test","isolated":true}'));
    expect(await rotation.rotateProjection('t', 'p')).toEqual({ secret: 's2', rotatedAt: 9 });
    expect(rotate).toHaveBeenCalledWith('t', 'p');
  });

  it('refuses a projection on the shared secret with WEBHOOK_SECRET_SHARED, rotating nothing', async () => {
    const { rotation, rotate } = setup(projection('{"webhookUrl":"https://x.test"}'));
    await expect(rotation.rotateProjection('t', 'p')).rejects.toMatchObject({ code: 'WEBHOOK_SECRET_SHARED' });
    expect(rotate).not.toHaveBeenCalled();
  });

  it('answers NOT_FOUND for an unknown projection', async () => {
    await expect(setup(null).rotation.rotateProjection('t', 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('rotates the tenant’s shared secret in the tenant scope', async () => {
    const { rotation, rotate } = setup(null);
    await rotation.rotateTenant('t');
    expect(rotate).toHaveBeenCalledWith('t', TENANT_SCOPE);
  });
});
