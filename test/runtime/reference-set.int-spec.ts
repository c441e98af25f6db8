import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { HostProcess } from '../../src/tenant-code/host/host-process';
import { createLauncher } from '../../src/tenant-code/sandboxed-launcher';
import { REPO } from '../support/runtime-harness';

/**
 * Tenant code must be compiled against the reference assemblies, never the runtime's implementation
 * assemblies (System.Private.CoreLib exposes far more: e.g. Vector.LoadUnsafe under an allowed namespace).
 * runtime/build.sh ships them beside the host, so a machine or image with only the .NET runtime (the
 * Docker image) compiles against the same surface as one with the SDK.
 */
jest.setTimeout(60_000);

const FRAMEWORK = [
  'System.Runtime',
  'System.Collections',
  'System.Collections.Immutable',
  'System.Linq',
  'System.Memory',
  'System.Runtime.Numerics',
  'System.Text.Json',
  'System.Text.RegularExpressions',
  'System.Text.Encodings.Web',
  'System.Security.Cryptography',
  'System.Xml.ReaderWriter', // for NodaTime's interfaces only (its every type is refused)
];

it('ships the reference set beside the host build', () => {
  const ref = path.join(REPO, 'runtime', 'bin', 'ref');
  expect(fs.readdirSync(ref).sort()).toEqual(FRAMEWORK.map((n) => `${n}.dll`).sort());
  // The C# side's list is the same one (a rename on either side fails here).
  const source = fs.readFileSync(path.join(REPO, 'runtime/EventSourcing.Runtime/Compilation/ReferenceSet.cs'), 'utf8');
  const listed = /FrameworkAssemblies =\s*\{([^}]*)\}/
    .exec(source)![1]
    .match(/"([^"]+)"/g)!
    .map((s) => s.slice(1, -1));
  expect(listed.sort()).toEqual([...FRAMEWORK].sort());
  // And the SDK package's targets, which narrow a tenant's local compile to the same set (plus EventSourcing.Sdk).
  const targets = fs.readFileSync(path.join(REPO, 'sdk/dotnet/build/EventSourcing.Sdk.targets'), 'utf8');
  const narrowed = /<EventSourcingServerReference Include="([^"]+)"/.exec(targets)![1].split(';');
  expect(narrowed.sort()).toEqual([...FRAMEWORK, 'NodaTime', 'System.IO.Hashing', 'EventSourcing.Sdk'].sort());
  // NodaTime (the tenants' time-zone API) is referenced from the host's own copy, published beside it.
  expect(fs.existsSync(path.join(REPO, 'runtime', 'bin', 'NodaTime.dll'))).toBe(true);
});

it('ships exactly the two source generators tenant code may use, and the XxHash assembly beside the host', () => {
  const generators = fs.readdirSync(path.join(REPO, 'runtime', 'bin', 'generators')).sort();
  expect(generators).toEqual(['System.Text.Json.SourceGeneration.dll', 'System.Text.RegularExpressions.Generator.dll']);
  // Referenced from the host's own copy (ReferenceSet), the one tenant code binds to at run time.
  expect(fs.existsSync(path.join(REPO, 'runtime', 'bin', 'System.IO.Hashing.dll'))).toBe(true);
});

it('the sandboxed production compiler compiles against that shipped set', async () => {
  const { launcher } = await createLauncher(loadConfig({}));
  const host = await HostProcess.start({
    mode: 'compile',
    label: 'compiler',
    launch: launcher.launch('compile'),
    readyTimeoutMs: 30_000,
    maxLineBytes: 64 << 20,
  });
  try {
    const stats = await host.call('stats', {}, 30_000);
    expect(stats.referenceSource).toBe('/runtime/ref');
  } finally {
    await host.close();
  }
});
