import { ProjectionCatalog } from '../../src/projections/projection-catalog';
import { ReducerCatalog } from '../../src/reducers/reducer-catalog';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { STORE, Store } from '../../src/store/store.port';
import { exampleSources } from '../support/runtime-harness';
import { Client, clientFor, newTenant, startService } from '../support/service-harness';
import { envFor, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { elapse } from '../support/wait';

// Issue 23, item 3: several instances on one PostgreSQL compile and deploy each upload once. Before
// the claim, two uploads sent at once through A and B were compiled on both (four compiles), and
// the second deploy of a projection failed on projection_versions_pkey at error level.

jest.setTimeout(240_000);

type Service = Awaited<ReturnType<typeof startService>>;

async function upload(client: Client, url: string, endpoint: 'reducers' | 'projections', example: string, reducerId?: string) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources(example))], { type: 'application/zip' }), 'archive.zip');
  if (reducerId) form.append('reducerId', reducerId);
  const res = await fetch(`${url}/${endpoint}/upload`, { method: 'POST', headers: { 'x-api-key': client.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function until(what: string, condition: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await elapse(100, 'poll interval');
  }
}

describe('several instances on one PostgreSQL: each upload compiled and deployed once', () => {
  const services: Service[] = [];
  /** Per instance: the archives (by their first file) each compiled, and the uploads each handed to a catalog. */
  const compiled: string[][] = [];
  const handedOver: string[][] = [];
  const errorLines: string[] = [];
  let write: jest.SpyInstance;

  beforeAll(async () => {
    // Error-level lines of both instances (they share this process's stdout; LOG_LEVEL=error writes only those).
    const original = process.stdout.write.bind(process.stdout);
    write = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: any[]) => {
      for (const line of String(chunk).split('\n')) if (line.includes('"level":"error"')) errorLines.push(line);
      return original(chunk, ...rest);
    }) as typeof process.stdout.write);
    const env = { ...(await envFor('postgres')), RUNTIME_COMPILER_HOSTS: '2' };
    for (let i = 0; i < 2; i++) {
      const svc = await startService(env);
      services.push(svc);
      const mine: string[] = [];
      const given: string[] = [];
      compiled.push(mine);
      handedOver.push(given);
      const pool = svc.app.get(RuntimePool);
      const compile = pool.compile.bind(pool);
      jest.spyOn(pool, 'compile').mockImplementation((files, kind) => {
        mine.push(files[0].path);
        return compile(files, kind);
      });
      const reducers = svc.app.get(ReducerCatalog);
      const autoBind = reducers.autoBind.bind(reducers);
      jest.spyOn(reducers, 'autoBind').mockImplementation((u) => (given.push(u.uploadId), autoBind(u)));
      const projections = svc.app.get(ProjectionCatalog);
      const deploy = projections.deploy.bind(projections);
      jest.spyOn(projections, 'deploy').mockImplementation((u) => (given.push(u.uploadId), deploy(u)));
    }
  }, 180_000);

  afterAll(async () => {
    for (const s of services) await s.close();
    write?.mockRestore();
    await stopBackends();
  });

  it('compiles uploads sent at once through A and B once each, binds and deploys each once, and logs no error', async () => {
    const [a, b] = services;
    const ta = await newTenant(a.url, 'claims');
    const tb = clientFor(b.url, ta.key, ta.tenantId);
    // The same tenant's uploads through both instances at once: both queues see all of them in the store.
    const sent = await Promise.all([
      upload(ta, a.url, 'reducers', 'bank-account', 'bank-v1'),
      upload(tb, b.url, 'reducers', 'orders', 'orders-v1'),
      upload(tb, b.url, 'projections', 'customer-totals'),
    ]);
    expect(sent.map((s) => s.status)).toEqual([202, 202, 202]);
    const projectionUpload = sent[2].body.uploadId ?? sent[2].body.projectionId;
    await until('every upload compiled', async () => {
      const st = await Promise.all([
        ta.get('/reducers/bank-v1/status'),
        tb.get('/reducers/orders-v1/status'),
        ta.get(`/projections/${projectionUpload}/status`),
      ]);
      return st.every((s) => s.status === 200 && s.body.status === 'compiled');
    });
    // The handover (bind, deploy) follows the record: wait for the three, then a moment of quiet is not needed: counts are exact.
    await until('every upload handed over', async () => handedOver.flat().length >= 3);
    expect(
      compiled
        .flat()
        .sort()
        .filter((p, i, all) => all.indexOf(p) !== i),
    ).toEqual([]); // no archive compiled twice
    expect(compiled.flat()).toHaveLength(3);
    expect(handedOver.flat().sort()).toEqual(['bank-v1', 'orders-v1', projectionUpload].sort());
    // Bound once, and read alike through both instances.
    for (const c of [ta, tb]) {
      expect((await c.get('/aggregate-types/account')).body).toMatchObject({ aggregateType: 'account', reducerId: 'bank-v1' });
      const list = await c.get('/projections');
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body).match(/customer-totals/g)?.length ?? 0).toBeGreaterThan(0);
    }
    expect(errorLines).toEqual([]);
  });

  it('compiles an upload whose claim an instance left behind when it died, once, after the claim lapsed', async () => {
    const [a] = services;
    const ta = await newTenant(a.url, 'orphaned');
    const before = compiled.flat().length;
    const accountsBefore = compiled.flat().filter((p) => p === 'AccountReducer.cs').length;
    // What a crashed instance leaves: an upload pending under its live claim (written as it would).
    const store = a.app.get<Store>(STORE);
    const sources = exampleSources('bank-account');
    await store.uploads.create({ uploadId: 'orphan-v1', tenantId: ta.tenantId, kind: 'reducer', sources, meta: {}, createdAt: Date.now() });
    const claimedAt = Date.now();
    const lapse = 3_000;
    expect((await store.uploads.claimOldest(ta.tenantId, 'dead-instance', claimedAt, claimedAt + lapse))?.uploadId).toBe('orphan-v1');
    // Neither live instance touches it while the claim holds; one takes it over after (their look at the store every 5 s).
    await until(
      'the orphaned upload compiled',
      async () => (await ta.get('/reducers/orphan-v1/status')).body.status === 'compiled',
      60_000,
    );
    const compiledAt = Date.parse((await ta.get('/reducers/orphan-v1/status')).body.compiledAt);
    expect(compiledAt).toBeGreaterThanOrEqual(claimedAt + lapse);
    await until('handed over', async () => handedOver.flat().includes('orphan-v1'));
    expect(compiled.flat()).toHaveLength(before + 1); // one compile, of this archive, on one of the two
    expect(compiled.flat().filter((p) => p === 'AccountReducer.cs')).toHaveLength(accountsBefore + 1);
    expect(handedOver.flat().filter((id) => id === 'orphan-v1')).toHaveLength(1);
    expect((await ta.get('/aggregate-types/account')).body).toMatchObject({ reducerId: 'orphan-v1' });
    expect(errorLines).toEqual([]);
  });
});
