/**
 * Issue 27 item 3 end to end: POST /reducers/validate and /projections/validate answer compiler errors,
 * sandbox refusals and warnings together (file, line, column), binding and storing nothing; an upload
 * with autoBind=false compiles without replacing the live binding; status records carry the diagnostics.
 */
import { Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

/** A reducer for the bank example's aggregate type: bound, it would replace the live reducer. */
const REDUCER = `using EventSourcing;
namespace Scratch;
public sealed class Balance { public long Amount { get; set; } }
public sealed class AccountReducer : IReducer<Balance>
{
    public Balance InitialState() => new();
    public Balance Apply(Balance state, Event e) => state;
}
`;
/** Line 2: CS8618 (a non-nullable property left null), a warning. */
const WARNING = `namespace Scratch;
public sealed class Note { public string Text { get; set; } }
`;
/** Line 4: CS0103; line 5: ES0001 (Guid.NewGuid resolves, the sandbox refuses it). */
const BROKEN = `namespace Scratch;
public static class Broken
{
    public static int Total() => missing + 1;
    public static System.Guid Id() => System.Guid.NewGuid();
}
`;

const zip = (files: Record<string, string>) => zipSources(Object.entries(files).map(([path, content]) => ({ path, content })));

async function post(client: Client, url: string, route: string, archive: Buffer, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([archive], { type: 'application/zip' }), 'sources.zip');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${url}${route}`, { method: 'POST', headers: { 'x-api-key': client.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const settled = (client: Client, id: string) =>
  until(
    () => client.get(`/reducers/${id}/status`),
    (r) => r.body.status !== 'pending_compilation',
    120_000,
    `the compile of ${id}`,
  );

const where = (d: any) => `${d.file}(${d.line},${d.column}): ${d.severity} ${d.code}`;

describe.each(STORE_BACKENDS)('validate and autoBind on %s', (backend) => {
  let svc: RunningService;
  let t: Client;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    t = await newTenant(svc.url, 'validate');
    expect((await post(t, svc.url, '/reducers/upload', zipSources(exampleSources('bank-account')), { reducerId: 'live' })).status).toBe(
      202,
    );
    await until(
      () => t.get('/aggregate-types/account'),
      (r) => r.status === 200 && r.body.reducerId === 'live',
      120_000,
      'the live reducer bound',
    );
  }, 180_000);
  afterAll(() => svc?.close());

  it('answers a compiler error, a refused API and a warning in one answer, with file and line, binding nothing', async () => {
    const answer = await post(t, svc.url, '/reducers/validate', zip({ 'Account.cs': REDUCER, 'Note.cs': WARNING, 'Broken.cs': BROKEN }));
    expect(answer.status).toBe(200);
    expect(answer.body.valid).toBe(false);
    expect(answer.body.discovered).toEqual([]);
    const seen = answer.body.diagnostics.map(where);
    expect(seen).toEqual(
      expect.arrayContaining([
        'Broken.cs(4,34): error CS0103',
        'Broken.cs(5,39): error ES0001',
        expect.stringMatching(/^Note\.cs\(2,\d+\): warning CS8618$/),
      ]),
    );
    const refusal = answer.body.diagnostics.find((d: any) => d.code === 'ES0001');
    expect(refusal.message).toBe("forbidden API: System.Guid.NewGuid (non-deterministic: use the event's Timestamp/ids instead)");
    // Nothing bound, nothing stored.
    expect((await t.get('/aggregate-types/account')).body.reducerId).toBe('live');
  });

  it('says valid with what an upload would bind, and its warnings', async () => {
    const answer = await post(t, svc.url, '/reducers/validate', zip({ 'Account.cs': REDUCER, 'Note.cs': WARNING }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      valid: true,
      discovered: [{ className: 'Scratch.AccountReducer', stateTypeName: 'Scratch.Balance', kind: 'reducer', aggregateType: 'account' }],
      diagnostics: [expect.objectContaining({ severity: 'warning', code: 'CS8618', file: 'Note.cs', line: 2 })],
    });
    expect((await t.get('/aggregate-types/account')).body.reducerId).toBe('live');
  });

  it('validates a projection archive the same way', async () => {
    const projection = `using EventSourcing;
namespace Scratch;
public sealed class Count { public int N { get; set; } }
public sealed class Counts : IProjection<Count>
{
    public string? ResolveKey(Event e) => System.DateTime.UtcNow.ToString();
    public Count Apply(Count state, Event e) => state;
}
`;
    const answer = await post(t, svc.url, '/projections/validate', zip({ 'Counts.cs': projection, 'Broken.cs': BROKEN }));
    expect(answer.status).toBe(200);
    expect(answer.body.valid).toBe(false);
    expect(answer.body.diagnostics.map(where)).toEqual(
      expect.arrayContaining(['Broken.cs(4,34): error CS0103', 'Broken.cs(5,39): error ES0001', 'Counts.cs(6,43): error ES0001']),
    );
    expect((await t.get('/projections')).body.projections).toEqual([]);
  });

  it('refuses a request without an archive', async () => {
    const form = new FormData();
    form.append('autoBind', 'false');
    const res = await fetch(`${svc.url}/reducers/validate`, { method: 'POST', headers: { 'x-api-key': t.key }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toBe('VALIDATION_FAILED');
  });

  it('compiles an upload with autoBind=false without replacing the live binding; its warnings are in the status record', async () => {
    const up = await post(t, svc.url, '/reducers/upload', zip({ 'Account.cs': REDUCER, 'Note.cs': WARNING }), {
      reducerId: 'scratch',
      autoBind: 'false',
    });
    expect(up.status).toBe(202);
    const st = await settled(t, 'scratch');
    expect(st.body.status).toBe('compiled');
    expect(st.body.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'CS8618', file: 'Note.cs', line: 2 })]);
    // A later upload of this tenant, bound: the worker hands compiles over in order, so scratch's turn is over.
    const probe = REDUCER.replace('AccountReducer', 'ProbeReducer');
    expect((await post(t, svc.url, '/reducers/upload', zip({ 'Probe.cs': probe }), { reducerId: 'probe' })).status).toBe(202);
    await until(
      () => t.get('/aggregate-types/probe'),
      (r) => r.status === 200,
      120_000,
      'the probe bound',
    );
    expect((await t.get('/aggregate-types/account')).body.reducerId).toBe('live');
    // Bound by hand when wanted.
    const bound = await request(`${svc.url}/aggregate-types/account`, 'PUT', { reducerId: 'scratch' }, { 'x-api-key': t.key });
    expect(bound.status).toBe(200);
    expect(bound.body.reducerId).toBe('scratch');
  });

  it('keeps a failed upload’s errors and refusals in its status record, located', async () => {
    const up = await post(t, svc.url, '/reducers/upload', zip({ 'Account.cs': REDUCER, 'Broken.cs': BROKEN }), { reducerId: 'broken' });
    expect(up.status).toBe(202);
    const st = await settled(t, 'broken');
    expect(st.body.status).toBe('failed');
    expect(st.body.compilationError).toContain('Broken.cs(4,34): error CS0103');
    expect(st.body.diagnostics.map(where)).toEqual(
      expect.arrayContaining(['Broken.cs(4,34): error CS0103', 'Broken.cs(5,39): error ES0001']),
    );
  });

  it("refuses an autoBind that is neither 'true' nor 'false'", async () => {
    const up = await post(t, svc.url, '/reducers/upload', zip({ 'Account.cs': REDUCER }), { autoBind: 'later' });
    expect(up.status).toBe(400);
    expect(up.body.error).toBe('VALIDATION_FAILED');
  });
});
