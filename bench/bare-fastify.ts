import Fastify from 'fastify';

/** The baseline: Fastify answering a JSON POST with its body and nothing else. */
async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  app.post('/echo', async (req) => req.body);
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
}
void main();
