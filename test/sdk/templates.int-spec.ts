import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { readSourceArchive } from '../../src/tenant-code/compiler/archive-reader';
import { findRuntimeDll } from '../../src/tenant-code/host/host-launcher';
import { REPO } from '../support/runtime-harness';

/**
 * The developer kit end to end, offline from the packed packages (issue 27 item 1): scripts/pack-sdk.sh packs
 * EventSourcing.Sdk and EventSourcing.Sdk.Testing into a feed folder; `dotnet new es-reducer` (sdk/templates/reducer)
 * and `dotnet new es-projection` (sdk/templates/projection) make a reducer and a projection, each with its xunit
 * project, against that feed; its tests run with the test kit; the SDK package's
 * EventSourcingUploadZip target writes the sources-only zip, which the service's archive reader takes and the real
 * host compiles.
 *
 * A version of its own per run (1.0.0-t<time>): NuGet caches a package by id and version, so a repacked 1.0.0 would
 * be read from the cache, not the feed. Its cache folders are removed afterwards.
 */

jest.setTimeout(600_000);

const run = promisify(execFile);
const DOTNET_ENV = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };

async function sh(file: string, args: string[], cwd = REPO): Promise<string> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env: DOTNET_ENV, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: err });
  }
}

/** One compile request to a real host in compile mode; resolves with the response's payload. */
function compileWithHost(files: { path: string; content: string }[], kind: string): Promise<any> {
  const child = spawn('dotnet', [findRuntimeDll(), '--mode', 'compile'], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buffer += d;
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const line = JSON.parse(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
        if (line.id === 1) {
          child.kill('SIGKILL');
          resolve(line.payload ?? line);
        }
      }
    });
    child.once('error', reject);
    child.stdin.write(`${JSON.stringify({ id: 1, type: 'compile', payload: { files, kind } })}\n`);
  });
}

const TEMPLATES = [
  {
    folder: 'reducer',
    shortName: 'es-reducer',
    name: 'Account',
    kind: 'reducer',
    source: 'AccountReducer.cs',
    type: 'class AccountReducer : IReducer<AccountState>',
  },
  {
    folder: 'projection',
    shortName: 'es-projection',
    name: 'Totals',
    kind: 'projection',
    source: 'TotalsProjection.cs',
    type: 'class TotalsProjection : IProjection<TotalsState>',
  },
];

describe('the templates against the packed SDK packages', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-template-'));
  const version = `1.0.0-t${Date.now()}`;
  const feed = path.join(tmp, 'feed');
  // A hive of its own: installs nothing into the user's dotnet new.
  const hive = ['--debug:custom-hive', path.join(tmp, 'hive')];

  beforeAll(async () => {
    const packed = await run('bash', ['scripts/pack-sdk.sh', feed], { cwd: REPO, env: { ...DOTNET_ENV, SDK_VERSION: version } }).then(
      (r) => r.stdout,
    );
    expect(packed).toContain(`version: ${version}`);
    expect(fs.readdirSync(feed).sort()).toEqual([`EventSourcing.Sdk.${version}.nupkg`, `EventSourcing.Sdk.Testing.${version}.nupkg`]);
  });

  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
    const cache = process.env.NUGET_PACKAGES ?? path.join(os.homedir(), '.nuget', 'packages');
    for (const id of ['eventsourcing.sdk', 'eventsourcing.sdk.testing']) {
      fs.rmSync(path.join(cache, id, version), { recursive: true, force: true });
      const folder = path.join(cache, id);
      if (fs.existsSync(folder) && fs.readdirSync(folder).length === 0) fs.rmdirSync(folder);
    }
  });

  it.each(TEMPLATES)('$shortName: instantiates, passes its own tests, and zips sources the host compiles', async (t) => {
    const solution = path.join(tmp, t.name);
    await sh('dotnet', ['new', 'install', path.join(REPO, 'sdk', 'templates', t.folder), ...hive]);
    await sh('dotnet', ['new', t.shortName, ...hive, '-n', t.name, '-o', solution, '--sdkVersion', version, '--feed', feed]);
    expect(fs.readFileSync(path.join(solution, t.name, t.source), 'utf8')).toContain(t.type);

    const tested = await sh(
      'dotnet',
      ['test', path.join(solution, `${t.name}.Tests`), '-nologo', '--logger', 'console;verbosity=normal'],
      solution,
    );
    expect(tested).toMatch(/Total tests: 3\s+Passed: 3/);
    expect(tested).not.toMatch(/Failed:\s+[1-9]/);

    // The server's usings, not the SDK's implicit ones.
    const obj = path.join(solution, t.name, 'obj', 'Debug', 'net10.0');
    const globalUsings = fs
      .readdirSync(obj)
      .filter((f) => f.endsWith('GlobalUsings.g.cs'))
      .map((f) => fs.readFileSync(path.join(obj, f), 'utf8'));
    expect(globalUsings.join('').match(/global using [^;]+;/g)).toEqual([
      'global using System;',
      'global using System.Collections.Generic;',
      'global using System.Linq;',
    ]);

    await sh('dotnet', ['build', path.join(solution, t.name), '-nologo', '-t:EventSourcingUploadZip'], solution);
    const zip = fs.readFileSync(path.join(solution, t.name, 'bin', `${t.name}.upload.zip`));
    const files = await readSourceArchive(zip);
    expect(files.map((f) => f.path)).toEqual([t.source]);

    const compiled = await compileWithHost(
      files.map((f) => ({ path: f.path, content: f.content })),
      t.kind,
    );
    expect(compiled).toMatchObject({ ok: true });
    expect(JSON.stringify(compiled)).toContain(t.source.replace('.cs', ''));
  });
});
