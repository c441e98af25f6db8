import Fastify from 'fastify';
import { RequestDrain } from './request-drain';

describe('RequestDrain', () => {
  it('refuses requests that arrive while draining with 503 SERVICE_UNAVAILABLE and Connection: close', async () => {
    const app = Fastify();
    const drain = new RequestDrain();
    drain.install(app);
    app.get('/', async () => ({ ok: true }));
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
    await drain.drain(10);
    const refused = await app.inject({ method: 'GET', url: '/' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.json()).toEqual({ error: 'SERVICE_UNAVAILABLE', message: 'the service is shutting down; retry on another instance' });
    await app.close();
  });
});
