import * as fs from 'node:fs';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { newTenant, request, startService } from '../support/service-harness';
import { parseScrape } from '../support/prometheus-text';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { ThrowawayRedis } from '../support/throwaway-redis';
import { elapse } from '../support/wait';

// GET /health/live and /health/ready for orchestrators (README "Operations", docs/operations.md): the
// store and the compiler each hold readiness back, named, while /health stays the contract's; Redis
// down leaves an instance that appends and reads ready, and says it is degraded (issue 23).

const services: Awaited<ReturnType<typeof startService>>[] = [];
let postgres: ThrowawayPostgres | undefined;
let redis: ThrowawayRedis | undefined;

afterAll(async () => {
  for (const s of services) await s.close().catch(() => undefined);
  await redis?.stop();
  await postgres?.stop();
}, 60_000);

/** Polls GET /health/ready until `until` holds for its answer, or fails with the last answer after 30 s. */
async function readyWhen(url: string, until: (r: { status: number; body: any }) => boolean) {
  let last: { status: number; body: any } | undefined;
  for (const end = Date.now() + 30_000; Date.now() < end; await elapse(100, 'poll interval')) {
    last = await request(`${url}/health/ready`, 'GET');
    if (until(last)) return last;
  }
  throw new Error(`readiness never reached the awaited answer; last: ${JSON.stringify(last)}`);
}

const isReady = (r: { status: number }) => r.status === 200;

async function expectAliveAndContractHealth(url: string): Promise<void> {
  expect(await request(`${url}/health/live`, 'GET')).toEqual({ status: 200, body: { status: 'live' } });
  expect(await request(`${url}/health`, 'GET')).toEqual({ status: 200, body: { status: 'ok' } });
}

describe('SQLite', () => {
  it('answers 503 naming the store while its data directory is gone, and 200 again once it is back', async () => {
    const svc = await startService();
    services.push(svc);
    const ready = await readyWhen(svc.url, isReady);
    expect(ready.body).toMatchObject({
      status: 'ready',
      store: { kind: 'sqlite', writable: true },
      compiler: { running: expect.any(Number) },
    });
    expect(ready.body.failing).toBeUndefined();
    // No Redis configured: no section for it.
    expect(ready.body.redis).toBeUndefined();

    // The open connection would go on committing into the moved file: only the probe sees it.
    const dir = svc.config.dataDir;
    fs.renameSync(dir, `${dir}-away`);
    try {
      const down = await request(`${svc.url}/health/ready`, 'GET');
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({
        status: 'not-ready',
        failing: ['store'],
        store: { kind: 'sqlite', writable: false, error: expect.stringMatching(/gone/) },
      });
      await expectAliveAndContractHealth(svc.url);
    } finally {
      fs.renameSync(`${dir}-away`, dir);
    }
    expect((await readyWhen(svc.url, isReady)).body).toMatchObject({ status: 'ready', store: { writable: true } });
  });

  it('restarts a compiler process that died idle, so readiness comes back without an upload', async () => {
    const svc = services[0];
    const pool = svc.app.get(RuntimePool);
    const before = (await pool.compilerPids()).filter((p): p is number => p !== undefined);
    expect(before.length).toBeGreaterThan(0);
    for (const pid of before) process.kill(pid, 'SIGKILL');
    await readyWhen(svc.url, (r) => r.status === 503 && r.body.failing?.includes('compiler'));
    // Ready again as soon as one compiler runs; every one it killed is restarted.
    const back = await readyWhen(svc.url, (r) => isReady(r) && r.body.compiler?.running === r.body.compiler?.of);
    expect(back.body.compiler).toEqual({ running: back.body.compiler.of, of: expect.any(Number) });
    const after = (await pool.compilerPids()).filter((p): p is number => p !== undefined);
    expect(after.length).toBe(before.length);
    for (const pid of after) expect(before).not.toContain(pid);
  });
});

describe('PostgreSQL and Redis', () => {
  it('answers 503 naming the store while PostgreSQL is down; while Redis is down stays 200, degraded, and appends; 200 after each', async () => {
    postgres = await ThrowawayPostgres.start();
    redis = await ThrowawayRedis.start();
    const svc = await startService({ DATABASE_URL: await postgres.createDatabase('health'), REDIS_URL: redis.url });
    services.push(svc);
    const ready = await readyWhen(svc.url, isReady);
    expect(ready.body).toMatchObject({ status: 'ready', store: { kind: 'postgres', writable: true }, redis: { reachable: true } });
    expect(ready.body.degraded).toBeUndefined();
    expect(await redisUp(svc.url)).toBe(1);

    postgres.crash();
    const noStore = await readyWhen(svc.url, (r) => r.status !== 200);
    expect(noStore).toMatchObject({
      status: 503,
      body: { status: 'not-ready', failing: ['store'], store: { kind: 'postgres', writable: false } },
    });
    await expectAliveAndContractHealth(svc.url);
    postgres.restart();
    await readyWhen(svc.url, isReady);

    const tenant = await newTenant(svc.url, 'health');
    await redis.down();
    // Redis is shared by every instance: a 503 would take them all out at once. Ready, and degraded.
    const noRedis = await readyWhen(svc.url, (r) => r.body?.redis?.reachable === false);
    expect(noRedis).toMatchObject({
      status: 200,
      body: { status: 'ready', degraded: ['redis'], redis: { reachable: false, effects: expect.any(Array) } },
    });
    expect(noRedis.body.failing).toBeUndefined();
    expect(noRedis.body.redis.effects.join(' ')).toMatch(/lanes.*quotas.*wake-ups/s);
    expect(await redisUp(svc.url)).toBe(0);
    // What readiness promises: it appends and reads.
    for (let i = 1; i <= 5; i++) {
      const appended = await tenant.post('/events', { aggregateId: 'order-1', eventType: 'Placed', data: { i }, expectedVersion: i - 1 });
      expect(appended.status).toBe(201);
    }
    const read = await tenant.get('/events/order-1');
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).toContain('"i":5');
    await expectAliveAndContractHealth(svc.url);

    await redis.up();
    const back = await readyWhen(svc.url, (r) => r.status === 200 && r.body?.redis?.reachable === true);
    expect(back.body).toMatchObject({ status: 'ready', redis: { reachable: true }, store: { writable: true } });
    expect(back.body.degraded).toBeUndefined();
    expect(await redisUp(svc.url)).toBe(1);
  });
});

/** eventstore_dependency_up{dependency="redis"} as /metrics says it now. */
async function redisUp(url: string): Promise<number | undefined> {
  const series = parseScrape(await (await fetch(`${url}/metrics`)).text()).series('eventstore_dependency_up');
  return series.find((s) => s.labels.dependency === 'redis')?.value;
}
