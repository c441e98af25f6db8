import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '../support/runtime-harness';

/**
 * The allowlist analyzer as a tenant meets it (issue 27 items 1 and 3): packed inside EventSourcing.Sdk by
 * scripts/pack-sdk.sh, it makes a refused API a build error with the server's code and message at its line, in the
 * project that references the package; a project that gets the package only through EventSourcing.Sdk.Testing (the
 * tenant's tests) builds as before. A version of its own per run (NuGet caches by id and version); its cache folders
 * are removed afterwards.
 */

jest.setTimeout(600_000);

const run = promisify(execFile);
const DOTNET_ENV = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };

/** `dotnet build` of a project: its exit code and output (a failed build is an answer here, not an error). */
async function build(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('dotnet', ['build', '-nologo', '-v', 'q'], { cwd: dir, env: DOTNET_ENV, timeout: 300_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function project(dir: string, packageId: string, version: string, feed: string, source: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, `${path.basename(dir)}.csproj`),
    `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net10.0</TargetFramework></PropertyGroup>
  <ItemGroup><PackageReference Include="${packageId}" Version="${version}" /></ItemGroup>
</Project>
`,
  );
  fs.writeFileSync(
    path.join(dir, 'nuget.config'),
    `<?xml version="1.0" encoding="utf-8"?>
<configuration><packageSources><add key="eventsourcing" value="${feed}" /></packageSources></configuration>
`,
  );
  fs.writeFileSync(path.join(dir, 'Code.cs'), source);
}

const REFUSED = `using EventSourcing;
namespace Tenant;
public sealed class S { public int N { get; set; } }
public sealed class R : IReducer<S>
{
    static int calls;
    public S InitialState() => new();
    public S Apply(S state, Event e) => new() { N = System.Guid.NewGuid().GetHashCode() + calls };
}
`;

describe('the allowlist analyzer in the packed SDK package', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-analyzer-'));
  const version = `1.0.0-a${Date.now()}`;
  const feed = path.join(tmp, 'feed');

  beforeAll(async () => {
    const packed = await run('bash', ['scripts/pack-sdk.sh', feed], { cwd: REPO, env: { ...DOTNET_ENV, SDK_VERSION: version } });
    expect(packed.stdout).toContain(`version: ${version}`);
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

  it('fails the build of a project referencing the SDK on a refused API and a static mutable field, at their lines', async () => {
    const dir = path.join(tmp, 'Tenant');
    project(dir, 'EventSourcing.Sdk', version, feed, REFUSED);
    const { code, output } = await build(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(/Code\.cs\(8,53\): error ES0001: forbidden API: System\.Guid\.NewGuid \(non-deterministic/);
    expect(output).toMatch(/Code\.cs\(6,16\): error ES0002: forbidden construct: static mutable field Tenant\.R\.calls/);
    // Generated files (obj/…AssemblyInfo.cs) are not the tenant's: nothing reported there.
    expect(output).not.toContain('AssemblyInfo.cs');
  });

  it('leaves a project that gets the package through the test kit alone', async () => {
    const dir = path.join(tmp, 'TenantTests');
    project(dir, 'EventSourcing.Sdk.Testing', version, feed, REFUSED.replace('namespace Tenant;', 'namespace TenantTests;'));
    const { code, output } = await build(dir);
    expect(output).not.toContain('ES000');
    expect(code).toBe(0);
  });
});
