import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { freePort } from './free-port';
import { elapse } from './wait';

const ADMIN_NAME = 'throwaway-redis-admin';

/** Finds redis-server on PATH. Fails loudly: a suite that needs Redis is never skipped. */
function findRedisServer(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  if (fs.existsSync('/usr/bin/redis-server')) return '/usr/bin/redis-server';
  throw new Error('redis-server not found: apt-get install redis-server');
}

/**
 * A Redis server of its own, in a temp dir on a free port, for one test file: no persistence, so
 * a restart is an empty server (what a crash of a cache-only Redis looks like to the service).
 */
export class ThrowawayRedis {
  private child?: ChildProcess;
  private admin?: Redis;

  private constructor(
    private readonly bin: string,
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<ThrowawayRedis> {
    const bin = findRedisServer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-redis-'));
    const redis = new ThrowawayRedis(bin, await freePort(), dir);
    try {
      await redis.launch();
    } catch (e) {
      await redis.stop();
      throw e;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async flushAll(): Promise<void> {
    await this.admin!.flushall();
  }

  /** Clients connected, leaving out this helper's own; only those whose name contains `nameContains` if given. */
  async clientCount(nameContains?: string): Promise<number> {
    const list = (await this.admin!.client('LIST')) as string;
    const names = list
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => / name=(\S*)/.exec(line)?.[1] ?? '');
    return names.filter((n) => n !== ADMIN_NAME && (nameContains === undefined || n.includes(nameContains))).length;
  }

  /** Kills the server (SIGKILL: a crash) and starts an empty one on the same port. */
  async restart(): Promise<void> {
    await this.kill('SIGKILL');
    await this.launch();
  }

  /** Kills the server (SIGKILL) and leaves it down until `up()`: Redis unreachable. */
  async down(): Promise<void> {
    await this.kill('SIGKILL');
  }

  /** Starts an empty server again on the same port after `down()`. */
  async up(): Promise<void> {
    await this.launch();
  }

  async stop(): Promise<void> {
    try {
      await this.kill('SIGTERM');
    } finally {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private async launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--bind',
      '127.0.0.1',
      '--daemonize',
      'no',
      '--dir',
      this.dir,
    ];
    const child = spawn(this.bin, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString('utf8')).slice(-4000)));
    child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString('utf8')).slice(-4000)));
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `redis-server exited (code ${code}, signal ${signal})`));
    child.once('error', (e) => (exited = `cannot start redis-server: ${e.message}`));

    const deadline = Date.now() + 15_000;
    for (;;) {
      if (exited) throw new Error(`${exited}\n${output}`);
      const probe = new Redis(this.port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectionName: ADMIN_NAME,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') {
          this.admin = probe;
          return;
        }
      } catch {
        probe.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer PING on port ${this.port} within 15 s\n${output}`);
      await elapse(50, 'poll interval: redis-server is starting');
    }
  }

  private async kill(signal: NodeJS.Signals): Promise<void> {
    this.admin?.disconnect();
    this.admin = undefined;
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await gone;
  }
}
