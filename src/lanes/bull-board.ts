import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Mounts a Bull Board (the operators' view of the lane queues) under basePath. Every request to
 * it, pages and API alike, must pass isAuthorized: the board can retry, promote and delete jobs.
 */
export async function mountBullBoard(
  fastify: FastifyInstance,
  queues: Queue[],
  basePath = '/admin/queues',
  isAuthorized: (req: FastifyRequest) => boolean,
): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter });
  await fastify.register(
    async (scope) => {
      // The service's onRequest authentication (RequestAuth) checks the admin token on these routes.
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object | undefined), auth: 'admin' } as typeof route.config;
      });
      // Inside this encapsulated scope only: the rest of the app keeps its own hooks.
      scope.addHook('onRequest', async (req, reply) => {
        if (!isAuthorized(req)) {
          return reply.code(401).send({ error: 'UNAUTHORIZED', message: 'the queue board needs an administrator token' });
        }
      });
      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: basePath },
  );
}
