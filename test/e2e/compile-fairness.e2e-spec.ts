import { randomBytes } from 'node:crypto';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { deepParentheses, pathologicalFixture, PathologicalSource } from '../support/pathological-sources';
import { exampleSources } from '../support/runtime-harness';
import { Client, newTenant, startService } from '../support/service-harness';
import { zipSources } from '../support/zip-writer';
import { elapse } from '../support/wait';

jest.setTimeout(180_000);

// A short deadline keeps this test quick; it is still far above what the ordinary compile needs.
const DEADLINE_MS = 5000;
const PENDING_CAP = 5;

async function upload(
  client: Client,
  url: string,
  endpoint: 'reducers' | 'projections',
  files: { path: string; content: string }[],
  reducerId?: string,
) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(files)], { type: 'application/zip' }), 'archive.zip');
  if (reducerId) form.append('reducerId', reducerId);
  const res = await fetch(`${url}/${endpoint}/upload`, { method: 'POST', headers: { 'x-api-key': client.key }, body: form });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const finished = (body: any) => body?.status !== 'pending_compilation';

/** Random bytes in a comment: a zip of nothing but parentheses is refused by the archive's compression-ratio cap. */
const incompressible = (s: PathologicalSource): PathologicalSource => ({
  ...s,
  files: s.files.map((f) => ({ ...f, content: `${f.content}\n// ${randomBytes(4096).toString('base64')}\n` })),
});

describe('a tenant’s pathological sources do not hold up another tenant’s compile', () => {
  let svc: Awaited<ReturnType<typeof startService>>;
  let a: Client;
  let b: Client;
  const compiles = new Map<string, number>();

  beforeAll(async () => {
    svc = await startService({
      RUNTIME_COMPILE_DEADLINE_MS: String(DEADLINE_MS),
      RUNTIME_COMPILER_HOSTS: '2',
      UPLOAD_PENDING_MAX_PER_TENANT: String(PENDING_CAP),
    });
    const pool = svc.app.get(RuntimePool);
    // A service that has been up a moment: both compilers have compiled once (they warm up at start anyway).
    // On a loaded machine a cold compile can pass the short deadline; the warm-up tries again (the
    // timed part below is what the test is about).
    const warm = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await pool.compile(exampleSources('orders'));
        } catch (e) {
          if (attempt === 3) throw e;
        }
      }
    };
    await Promise.all([warm(), warm()]);
    // Count compile attempts per archive (by its first file) to check the retry rules from outside the queue.
    const compile = pool.compile.bind(pool);
    jest.spyOn(pool, 'compile').mockImplementation((files, kind) => {
      compiles.set(files[0].path, (compiles.get(files[0].path) ?? 0) + 1);
      return compile(files, kind);
    });
    a = await newTenant(svc.url, 'hostile');
    b = await newTenant(svc.url, 'ordinary');
  }, 120_000);
  afterAll(() => svc?.close());

  it('compiles B’s example in under 5 s while A’s pathological uploads are queued, fails A’s by the rules, and caps A', async () => {
    const hostile: (PathologicalSource & { id: string; expect: RegExp })[] = [
      {
        ...pathologicalFixture('compile-lambda-overloads-4x11'),
        id: 'a-lambda-4x11',
        expect: /exceeded the 5000 ms deadline and was stopped; it is not retried/,
      },
      { ...pathologicalFixture('compile-nested-interpolation'), id: 'a-interpolation', expect: /exceeded the 5000 ms deadline/ },
      { ...pathologicalFixture('compile-lambda-overloads-2x18'), id: 'a-lambda-2x18', expect: /exceeded the 5000 ms deadline/ },
      // Fails inside the compiler (out of memory, a metadata limit) or dies where the heap is capped: a crash, retried once.
      {
        ...pathologicalFixture('compile-doubling-consts'),
        id: 'a-doubling',
        expect: /compiler failed on this archive 2 times|exceeded the 5000 ms deadline/,
      },
      {
        ...incompressible(deepParentheses(100_000)),
        id: 'a-parentheses',
        expect: /error CS8078: An expression is too long or complex to compile/,
      },
    ];
    const started = Date.now();
    for (const h of hostile) expect((await upload(a, svc.url, 'reducers', h.files, h.id)).status).toBe(202);

    // Over the cap: 429 with a stable code and Retry-After, for reducer and projection uploads alike, nothing stored.
    const refused = await upload(a, svc.url, 'reducers', exampleSources('bank-account'), 'a-refused');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'TOO_MANY_PENDING_UPLOADS', pending: PENDING_CAP, maxPending: PENDING_CAP });
    expect(refused.headers.get('retry-after')).toBe(String(DEADLINE_MS / 1000));
    expect((await a.get('/reducers/a-refused/status')).status).toBe(404);
    const refusedProjection = await upload(a, svc.url, 'projections', exampleSources('customer-totals'));
    expect(refusedProjection.status).toBe(429);
    expect(refusedProjection.body.error).toBe('TOO_MANY_PENDING_UPLOADS');

    // B's ordinary upload compiles on the other compiler, without waiting for A's.
    const t0 = Date.now();
    expect((await upload(b, svc.url, 'reducers', exampleSources('bank-account'), 'b-bank')).status).toBe(202);
    let bStatus: any;
    while (Date.now() - t0 < 30_000) {
      bStatus = (await b.get('/reducers/b-bank/status')).body;
      if (finished(bStatus)) break;
      await elapse(25, 'poll interval: the time to finish is measured');
    }
    const bMs = Date.now() - t0;
    expect(bStatus).toMatchObject({ status: 'compiled', compiledClassName: 'BankAccount.AccountReducer' });
    expect(bMs).toBeLessThan(5000);

    // A's uploads all end failed, each with the reason its rule gives.
    const statuses = new Map<string, any>();
    while (Date.now() - started < 90_000) {
      for (const h of hostile) statuses.set(h.id, (await a.get(`/reducers/${h.id}/status`)).body);
      if ([...statuses.values()].every(finished)) break;
      await elapse(200, 'poll interval');
    }
    for (const h of hostile) {
      expect(statuses.get(h.id)).toMatchObject({ status: 'failed', compilationError: expect.stringMatching(h.expect) });
    }
    // Not retried past the rules: a timeout or a compile error once, a crash at most twice; B once.
    for (const h of hostile) {
      const tries = compiles.get(h.files[0].path);
      if (h.id === 'a-doubling') expect(tries).toBeLessThanOrEqual(2);
      else expect(tries).toBe(1);
    }
    expect(compiles.get(exampleSources('bank-account')[0].path)).toBe(1);

    // With its queue drained, A may upload again.
    expect((await upload(a, svc.url, 'reducers', exampleSources('orders'), 'a-orders')).status).toBe(202);
  });
});
