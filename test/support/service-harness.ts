import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { freePort } from './free-port';
import { elapse } from './wait';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface RunningService {
  url: string;
  close(): Promise<void>;
}

/** The whole service in this process on a free port, reached over real HTTP. */
export async function startService(
  env: Record<string, string | undefined> = {},
): Promise<RunningService & { app: NestFastifyApplication; config: AppConfig }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-svc-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'error', PORT: '0', HOST: '127.0.0.1', ...env });
  const { app } = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    url,
    app,
    config,
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The built service (`dist/src/main.js`) as a child process, for crash and signal tests. */
export class ServiceProcess {
  child!: ChildProcess;
  url!: string;
  output = '';
  /** stdout alone (output has both streams, interleaved). */
  stdout = '';

  /** Kept across `start()`s once chosen, so a restarted instance answers where its clients look for it. */
  private port?: number;

  constructor(private readonly env: Record<string, string>) {}

  async start(): Promise<void> {
    // A second child over a live one would orphan the first: nothing stops it, its pipes keep jest from exiting.
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      throw new Error(`the service (pid ${this.child.pid}) is still running: kill it before starting it again`);
    }
    const port = (this.port ??= await freePort());
    this.url = `http://127.0.0.1:${port}`;
    // From test/support (ts-jest) the build is in dist/; from dist/test/support (a bench) it is beside.
    const root = path.join(__dirname, '..', '..');
    const main = fs.existsSync(path.join(root, 'src', 'main.js'))
      ? path.join(root, 'src', 'main.js')
      : path.join(root, 'dist', 'src', 'main.js');
    if (!fs.existsSync(main)) throw new Error(`${main} missing: run 'npm run build' (npm test does)`);
    this.child = spawn(process.execPath, [main], {
      env: { ...process.env, ADMIN_TOKEN, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...this.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Known to the test environment, which kills what a failed test left running (reaping-environment.js).
    (globalThis as { __serviceChildren?: Set<ChildProcess> }).__serviceChildren?.add(this.child);
    this.child.stdout!.on('data', (d) => {
      this.output += d;
      this.stdout += d;
    });
    this.child.stderr!.on('data', (d) => (this.output += d));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`service exited at start:\n${this.output}`);
      try {
        if ((await fetch(`${this.url}/health`)).ok) return;
      } catch {
        /* not listening yet */
      }
      await elapse(100, 'poll interval: the service is starting');
    }
    throw new Error(`service did not become healthy:\n${this.output}`);
  }

  exited(): Promise<number | null> {
    // A child killed by a signal has exitCode null but signalCode set: it has exited all the same.
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  /** Sends `signal`; a process still alive 20 s later is killed, so a hung shutdown fails a test instead of hanging it. */
  async kill(signal: NodeJS.Signals): Promise<number | null> {
    const done = this.exited();
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    try {
      return await done;
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface Client {
  key: string;
  tenantId: string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  get(path: string): Promise<{ status: number; body: any }>;
}

export async function request(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    // A hung request must fail the test, not outlive it.
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

/** Creates a tenant through the admin API and returns a client bound to its key. */
export async function newTenant(baseUrl: string, name = 'tenant'): Promise<Client> {
  const res = await request(`${baseUrl}/admin/tenants`, 'POST', { name }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return clientFor(baseUrl, res.body.apiKey, res.body.tenantId);
}

export function clientFor(baseUrl: string, key: string, tenantId = ''): Client {
  return {
    key,
    tenantId,
    post: (p, body, headers = {}) => request(`${baseUrl}${p}`, 'POST', body, { 'x-api-key': key, ...headers }),
    get: (p) => request(`${baseUrl}${p}`, 'GET', undefined, { 'x-api-key': key }),
  };
}
