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
 * makes a reducer and its xunit project against that feed; its tests run with the test kit; the SDK package's
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
function compileWithHost(files: { path: string; content: string }[]): Promise<any> {
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
    child.stdin.write(`${JSON.stringify({ id: 1, type: 'compile', payload: { files, kind: 'reducer' } })}\n`);
  });
}

describe('the reducer template against the packed SDK packages', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-template-'));
  const version = `1.0.0-t${Date.now()}`;
  const feed = path.join(tmp, 'feed');
  const solution = path.join(tmp, 'Account');

  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
    const cache = process.env.NUGET_PACKAGES ?? path.join(os.homedir(), '.nuget', 'packages');
    for (const id of ['eventsourcing.sdk', 'eventsourcing.sdk.testing'])
      fs.rmSync(path.join(cache, id, version), { recursive: true, force: true });
  });

  it('packs, instantiates, passes its own tests, and zips sources the host compiles', async () => {
    const packed = await run('bash', ['scripts/pack-sdk.sh', feed], { cwd: REPO, env: { ...DOTNET_ENV, SDK_VERSION: version } }).then(
      (r) => r.stdout,
    );
    expect(packed).toContain(`version: ${version}`);
    expect(fs.readdirSync(feed).sort()).toEqual([`EventSourcing.Sdk.${version}.nupkg`, `EventSourcing.Sdk.Testing.${version}.nupkg`]);

    // A hive of its own: installs nothing into the user's dotnet new.
    const hive = ['--debug:custom-hive', path.join(tmp, 'hive')];
    await sh('dotnet', ['new', 'install', path.join(REPO, 'sdk', 'templates', 'reducer'), ...hive]);
    await sh('dotnet', ['new', 'es-reducer', ...hive, '-n', 'Account', '-o', solution, '--sdkVersion', version, '--feed', feed]);
    expect(fs.readFileSync(path.join(solution, 'Account', 'AccountReducer.cs'), 'utf8')).toContain(
      'class AccountReducer : IReducer<AccountState>',
    );

    const tested = await sh(
      'dotnet',
      ['test', path.join(solution, 'Account.Tests'), '-nologo', '--logger', 'console;verbosity=normal'],
      solution,
    );
    expect(tested).toMatch(/Passed Account\.Tests\.AccountReducerTests\.Deposits_add_up/);
    expect(tested).toMatch(/Passed Account\.Tests\.AccountReducerTests\.A_withdrawal_before_opening_fails/);
    expect(tested).toMatch(/Passed Account\.Tests\.AccountReducerTests\.The_state_is_stored_as_camel_case_json/);
    expect(tested).toMatch(/Total tests: 3\s+Passed: 3/);

    // The server's usings, not the SDK's implicit ones.
    const globalUsings = fs
      .readdirSync(path.join(solution, 'Account', 'obj', 'Debug', 'net10.0'))
      .filter((f) => f.endsWith('GlobalUsings.g.cs'))
      .map((f) => fs.readFileSync(path.join(solution, 'Account', 'obj', 'Debug', 'net10.0', f), 'utf8'));
    expect(globalUsings.join('').match(/global using [^;]+;/g)).toEqual([
      'global using System;',
      'global using System.Collections.Generic;',
      'global using System.Linq;',
    ]);

    await sh('dotnet', ['build', path.join(solution, 'Account'), '-nologo', '-t:EventSourcingUploadZip'], solution);
    const zip = fs.readFileSync(path.join(solution, 'Account', 'bin', 'Account.upload.zip'));
    const files = await readSourceArchive(zip);
    expect(files.map((f) => f.path)).toEqual(['AccountReducer.cs']);

    const compiled = await compileWithHost(files.map((f) => ({ path: f.path, content: f.content })));
    expect(compiled).toMatchObject({ ok: true });
    expect(JSON.stringify(compiled)).toContain('AccountReducer');
  });
});
