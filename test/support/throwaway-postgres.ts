import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { freePort } from './free-port';

/** Finds initdb/pg_ctl on PATH or in Debian's versioned folders. Fails loudly: a suite that needs PostgreSQL is never skipped. */
function findPgBin(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return path.dirname(fs.realpathSync(onPath));
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = path.join(root, v, 'bin');
    if (fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql');
}

/**
 * A PostgreSQL server of its own, in a temp dir on a free port, for one test file or benchmark.
 * initdb refuses to run as root, so as root it runs as the 'postgres' user that Debian's package creates.
 */
export class ThrowawayPostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly run: (cmd: string, args: string[]) => void,
    private readonly startArgs: string[],
  ) {}

  static async start(): Promise<ThrowawayPostgres> {
    const bin = findPgBin();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-pg-'));
    const asRoot = process.getuid?.() === 0;
    if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
    const run = (cmd: string, args: string[]) => {
      const full = path.join(bin, cmd);
      const res = asRoot
        ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8' })
        : spawnSync(full, args, { encoding: 'utf8' });
      if (res.status !== 0) throw new Error(`${cmd} failed: ${res.stderr || res.stdout || res.error}`);
    };
    const data = path.join(dir, 'data');
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '-N']);
    const port = await freePort();
    const opts = [
      `-p ${port}`,
      `-k ${dir}`,
      `-c listen_addresses=127.0.0.1`,
      `-c max_connections=200`,
      `-c shared_buffers=256MB`,
      // Durable like production: the figures must include a real fsync per commit.
      `-c fsync=on`,
      `-c synchronous_commit=on`,
    ].join(' ');
    const startArgs = ['-D', data, '-o', opts, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start'];
    run('pg_ctl', startArgs);
    return new ThrowawayPostgres(port, dir, run, startArgs);
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** A fresh database on this server, so test files and suites never share state. */
  async createDatabase(prefix = 'test'): Promise<string> {
    const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    const c = new Client({ connectionString: this.url() });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${name}`);
    } finally {
      await c.end();
    }
    return this.url(name);
  }

  /** Immediate stop: what a crash of the database server looks like to the service. */
  crash(): void {
    this.run('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }

  restart(): void {
    this.run('pg_ctl', this.startArgs);
  }

  async stop(): Promise<void> {
    try {
      this.run('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
    } finally {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
