import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { exampleSources } from '../support/runtime-harness';
import { until } from '../support/wait';

jest.setTimeout(180_000);

const CLI = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'esctl', 'esctl.js');

/** esctl as a tenant runs it: a child process (asynchronous: the service answers from this process). */
class Esctl {
  stdout = '';
  stderr = '';
  readonly exit: Promise<number | null>;
  constructor(env: Record<string, string>, args: string[]) {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => (this.stdout += d));
    child.stderr.on('data', (d) => (this.stderr += d));
    this.exit = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }
}

describe('esctl against a running service', () => {
  let svc: RunningService;
  let tenant: Client;
  let home: string;
  let env: Record<string, string>;
  const esctl = async (...args: string[]) => {
    const run = new Esctl(env, args);
    return { code: await run.exit, stdout: run.stdout, stderr: run.stderr };
  };
  /** A directory of sources, as a tenant's project folder would hold them (with build output beside). */
  const project = (name: string, files: { path: string; content: string }[]) => {
    const dir = path.join(home, name);
    fs.mkdirSync(path.join(dir, 'obj'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'obj', 'Junk.cs'), 'this is not C#');
    for (const f of files) fs.writeFileSync(path.join(dir, f.path), f.content);
    return dir;
  };

  beforeAll(async () => {
    svc = await startService({ PROJECTION_READ_WAIT_MS: '5000' });
    tenant = await newTenant(svc.url, 'esctl');
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'esctl-e2e-'));
    env = { ESCTL_CONFIG: path.join(home, 'config', 'esctl.json'), ESCTL_URL: '', ESCTL_API_KEY: '' };
  });
  afterAll(async () => {
    await svc?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('refuses a wrong key at login and saves nothing', async () => {
    const r = await esctl('login', '--url', svc.url, '--api-key', 'esk_wrong');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/401 UNAUTHORIZED/);
    expect(fs.existsSync(env.ESCTL_CONFIG)).toBe(false);
  });

  it('logs in (the key saved 0600), deploys the bank reducer and reads an aggregate through it', async () => {
    const login = await esctl('login', '--url', svc.url, '--api-key', tenant.key);
    expect(login).toMatchObject({ code: 0, stdout: expect.stringContaining(`as tenant ${tenant.tenantId}`) });
    expect(fs.statSync(env.ESCTL_CONFIG).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(env.ESCTL_CONFIG, 'utf8'))).toEqual({ url: svc.url, apiKey: tenant.key });

    const deployed = await esctl('deploy', 'reducer', project('bank', exampleSources('bank-account')), '--id', 'bank-cli');
    expect(deployed.stderr).not.toMatch(/error/);
    expect(deployed).toMatchObject({ code: 0, stdout: 'reducer bank-cli: BankAccount.AccountReducer (aggregate type account)\n' });

    const status = await esctl('status', 'reducer', 'bank-cli');
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: 'bank-cli', status: 'compiled' });

    // deploy waits for the auto-bind that follows the compile: the state read below needs no wait of its own.
    expect(deployed.stderr).toContain('bound to aggregate type account');
    expect(JSON.parse((await esctl('status', 'aggregate-type', 'account')).stdout)).toMatchObject({ reducerId: 'bank-cli' });
    expect((await tenant.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'Ada' } })).status).toBe(
      201,
    );
    expect((await tenant.post('/events', { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 70 } })).status).toBe(
      201,
    );
    const state = await esctl('state', 'aggregate', 'account', 'account-1');
    expect(state.code).toBe(0);
    expect(JSON.parse(state.stdout)).toMatchObject({ version: 2, state: { owner: 'Ada', balance: 70 } });
  });

  it('prints a failed compile as file(line,col): error CODE: message and exits 1', async () => {
    const broken = project('broken', [{ path: 'Broken.cs', content: 'public class Broken { void M() { var x = y; } }' }]);
    const r = await esctl('deploy', 'reducer', broken, '--id', 'broken-cli');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Broken\.cs\(1,\d+\): error CS0103: The name 'y' does not exist/m);
    expect(r.stderr).toContain('reducer broken-cli: compilation failed');
    // Only the .cs sources of the folder went up: obj/Junk.cs would have failed with its own error.
    expect(r.stderr).not.toContain('Junk.cs');
  });

  it('deploys a projection, tails a notification live, and reads its state and status', async () => {
    const deployed = await esctl('deploy', 'projection', project('totals', exampleSources('customer-totals')));
    expect(deployed.code).toBe(0);
    const projectionId = /^projection (\S+) \(customer-totals\): version \S+ deployed$/m.exec(deployed.stdout)?.[1];
    expect(projectionId).toBeDefined();

    const tail = new Esctl(env, ['tail', projectionId!, '--count', '1']);
    await until(
      () => tail.stderr,
      (s) => s.includes('tailing projection'),
      30_000,
      'the stream to go live',
    );
    const placed = await tenant.post('/events', {
      aggregateId: 'order-1',
      eventType: 'OrderPlaced',
      data: { customerId: 'cust-1', lines: [{ sku: 'x', qty: 2, price: 5 }] },
    });
    expect(placed.status).toBe(201);
    expect(await tail.exit).toBe(0);
    expect(JSON.parse(tail.stdout.trim())).toMatchObject({
      type: 'state_changed',
      projectionId,
      stateKey: 'cust-1',
      aggregateId: 'order-1',
      state: { customerId: 'cust-1', orderCount: 1, totalAmount: 10 },
    });

    // --after replays the log from there, then goes live: the same notification again, with its sequence.
    const replay = await esctl('tail', projectionId!, '--after', '0', '--count', '1');
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual(JSON.parse(tail.stdout.trim()));

    const state = await esctl('state', 'projection', projectionId!, 'cust-1');
    expect(state.code).toBe(0);
    expect(JSON.parse(state.stdout)).toMatchObject({ state: { orderCount: 1, totalAmount: 10 } });
    const overview = await esctl('status');
    expect(overview.stdout).toContain(`tenant ${tenant.tenantId} (esctl)`);
    expect(overview.stdout).toMatch(new RegExp(`^projection ${projectionId} customer-totals: active `, 'm'));
    expect(JSON.parse((await esctl('status', 'projection', projectionId!)).stdout)).toMatchObject({ projectionId, status: 'compiled' });
  });

  it('runs as `npx esctl` from the checkout (the package.json bin, executable after npm run build)', async () => {
    const root = path.join(__dirname, '..', '..');
    const npx = spawn('npx', ['--no', 'esctl', 'status'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npx.stdout.on('data', (d) => (out += d));
    expect(await new Promise((resolve) => npx.on('exit', resolve))).toBe(0);
    expect(out).toContain(`tenant ${tenant.tenantId} (esctl) at ${svc.url}`);
  });

  it('validates without binding: every diagnostic at once, exit 1 when not valid', async () => {
    const dir = project('bank-again', exampleSources('bank-account'));
    const valid = await esctl('validate', 'reducer', dir);
    expect(valid).toMatchObject({ code: 0, stdout: expect.stringContaining('valid: reducer sources') });
    const broken = project('validate-broken', [
      ...exampleSources('bank-account'),
      {
        path: 'Broken.cs',
        content: 'public static class Broken\n{\n    public static System.Guid Id() => System.Guid.NewGuid() + missing;\n}\n',
      },
    ]);
    const invalid = await esctl('validate', 'reducer', broken);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/Broken\.cs\(3,\d+\): error CS0103: /);
    expect(invalid.stderr).toContain('Broken.cs(3,39): error ES0001: forbidden API: System.Guid.NewGuid');
    expect((await tenant.get('/aggregate-types/account')).body.reducerId).toBe('bank-cli');
  });

  it('deploys a reducer with --no-bind: compiled, the live binding stays', async () => {
    const r = await esctl(
      'deploy',
      'reducer',
      project('bank-scratch', exampleSources('bank-account')),
      '--no-bind',
      '--id',
      'bank-scratch',
    );
    expect(r).toMatchObject({ code: 0, stderr: expect.stringContaining('not bound (--no-bind)') });
    expect((await tenant.get('/reducers/bank-scratch/status')).body.status).toBe('compiled');
    expect((await tenant.get('/aggregate-types/account')).body.reducerId).toBe('bank-cli');
  });

  it('dry-runs the same reducer over the account aggregates: the report says nothing would change', async () => {
    const dir = project('bank-dry', exampleSources('bank-account'));
    const dryRun = await esctl('dry-run', 'reducer', 'account', dir);
    expect(dryRun.code).toBe(0);
    const report = JSON.parse(dryRun.stdout);
    expect(report).toMatchObject({ truncated: false, compared: 'all', baseline: { reducerId: 'bank-cli' }, failures: [] });
    expect(report.keys).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1, held: 0 });
    expect(dryRun.stderr).toContain('keys: 0 added, 0 removed, 0 changed, 1 unchanged, 0 held');
  });
});
