import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '../support/runtime-harness';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';

/**
 * Issue 27's done-when test: a newcomer's walkthrough, run as docs/csharp.md writes it. scripts/pack-sdk.sh packs the
 * SDK and the test kit into a feed folder; the doc's walkthrough block (between its walkthrough:start and
 * walkthrough:end markers) then runs verbatim under bash: `dotnet new es-projection` against that feed, Apply and a test
 * written, `dotnet test` on the test kit, `esctl login` and `esctl deploy projection` (the real CLI from dist, through
 * npx) to a service running here on SQLite, two events appended with curl, `esctl tail` and `esctl state`. Then the
 * same solution shows that local green means remote green: a refused API fails `dotnet test` with the server's ES0001
 * at the line, and a type outside the server's reference set does not compile.
 *
 * The one test-only difference: `dotnet new` installs into a hive of its own (a shell function adds
 * --debug:custom-hive), so the user's templates are untouched. A package version of its own per run (NuGet caches by
 * id and version); its cache folders are removed afterwards.
 */

jest.setTimeout(900_000);

const run = promisify(execFile);
const DOTNET_ENV = { DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };

/**
 * Ordinary modern C# the server accepts (test/runtime/ordinary-code.int-spec.ts, OrdinaryCodeTests): new T(), static
 * readonly Regex/Frozen/Immutable fields, SHA256, collection expressions (to interfaces, spreads, spans, params spans),
 * iterators, lambdas, records, local functions. Debug's lowering of some of them differs from the server's optimized
 * compile: the SDK's targets compile optimized so that the kit's check sees what the server sees.
 */
const ORDINARY = `using System.Collections.Frozen;
using System.Collections.Immutable;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Totals;

internal sealed record Item(string Sku, int Qty);
internal sealed class Line { public int Qty { get; set; } = 1; }

internal static class Ordinary
{
    static readonly Regex Sku = new("^[A-Z]{3}-[0-9]+$");
    static readonly FrozenDictionary<string, int> Prices = new Dictionary<string, int> { ["ABC-1"] = 5 }.ToFrozenDictionary(StringComparer.Ordinal);
    static readonly ImmutableArray<string> Kinds = ["Sold"];
    static T Fresh<T>() where T : new() => new T();
    static int Sum(params ReadOnlySpan<int> xs) { var t = 0; foreach (var x in xs) t += x; return t; }
    static IEnumerable<int> Evens(int n) { for (var i = 0; i < n; i += 2) yield return i; }

    public static string Describe(Event e, List<Item> items)
    {
        var sku = e.Data.GetProperty("sku").GetString() ?? "";
        int[] extra = [1, 2, 3];
        ReadOnlySpan<int> span = [4, 5, 6];
        int[] sizes = [.. extra, span[0], Sum(1, 2, 3), Fresh<Line>().Qty, Prices.GetValueOrDefault(sku)];
        IReadOnlyList<string> names = ["a", "b"];
        var (a, b) = (names.Count, e.Version);
        string Local(int x) => $"{x}:{a}:{b}";
        var kept = items.Where(i => i.Qty > 0).Select(i => i with { Qty = i.Qty + Evens(4).Count() }).ToList();
        var hash = Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(sku)));
        return (Kinds.Contains(e.EventType) && Sku.IsMatch(sku) ? Local(sizes.Length) : "") + kept.Count + hash;
    }
}
`;

/** The shell block between the walkthrough markers of docs/csharp.md. */
function walkthroughBlock(doc: string): string {
  const start = doc.indexOf('<!-- walkthrough:start');
  const end = doc.indexOf('<!-- walkthrough:end -->');
  if (start < 0 || end < start) throw new Error('docs/csharp.md: no walkthrough markers');
  const fenced = /```sh\n([\s\S]*?)\n```/.exec(doc.slice(start, end));
  if (!fenced) throw new Error('docs/csharp.md: no sh block between the walkthrough markers');
  return fenced[1];
}

/** bash with a script on stdin, asynchronously (the service answering curl and esctl runs in this process). */
function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-s'], { cwd, env: { ...process.env, ...DOTNET_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(script);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a newcomer, from dotnet new to a deployed projection (docs/csharp.md)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-newcomer-'));
  const version = `1.0.0-n${Date.now()}`;
  const feed = path.join(tmp, 'feed');
  const work = path.join(tmp, 'work');
  const solution = path.join(work, 'Totals');
  let svc: RunningService;
  let tenant: Client;
  let env: Record<string, string>;
  let projectionId: string;

  beforeAll(async () => {
    const [packed, service] = await Promise.all([
      run('bash', ['scripts/pack-sdk.sh', feed], { cwd: REPO, env: { ...process.env, ...DOTNET_ENV, SDK_VERSION: version } }),
      startService({}),
    ]);
    expect(packed.stdout).toContain(`version: ${version}`);
    svc = service;
    tenant = await newTenant(svc.url, 'newcomer');
    fs.mkdirSync(work);
    env = {
      ES_REPO: REPO,
      ES_FEED: feed,
      ES_SDK: version,
      ES_URL: svc.url,
      ES_KEY: tenant.key,
      ESCTL_CONFIG: path.join(tmp, 'esctl.json'),
      ESCTL_URL: '',
      ESCTL_API_KEY: '',
    };
  });

  afterAll(async () => {
    await svc?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    const cache = process.env.NUGET_PACKAGES ?? path.join(os.homedir(), '.nuget', 'packages');
    for (const id of ['eventsourcing.sdk', 'eventsourcing.sdk.testing']) {
      fs.rmSync(path.join(cache, id, version), { recursive: true, force: true });
      const folder = path.join(cache, id);
      if (fs.existsSync(folder) && fs.readdirSync(folder).length === 0) fs.rmdirSync(folder);
    }
  });

  it('runs the walkthrough as written: tests pass locally, the projection deploys, its state is read back', async () => {
    const block = walkthroughBlock(fs.readFileSync(path.join(REPO, 'docs', 'csharp.md'), 'utf8'));
    const hive = path.join(tmp, 'hive');
    const prelude = [
      'set -euo pipefail',
      `dotnet() { if [ "\${1:-}" = new ]; then shift; command dotnet new "$@" --debug:custom-hive ${JSON.stringify(hive)}; else command dotnet "$@"; fi; }`,
    ].join('\n');
    const started = Date.now();
    const r = await bash(`${prelude}\n${block}\n`, work, env);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`newcomer walkthrough: ${seconds} s (excluding the pack)\n`);
    if (r.code !== 0) throw new Error(`the walkthrough failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);

    expect(r.stdout).toMatch(/Passed!\s+-\s+Failed:\s+0, Passed:\s+4, Skipped:\s+0, Total:\s+4/);
    expect(JSON.parse(fs.readFileSync(env.ESCTL_CONFIG, 'utf8'))).toEqual({ url: svc.url, apiKey: tenant.key });
    // One JSON object a line (curl's answers, tail's notifications), then the state, pretty-printed, last.
    const notes = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{"'))
      .map((l) => JSON.parse(l))
      .filter((j) => j.type === 'state_changed');
    expect(notes.map((n) => n.state)).toEqual([
      { orders: 1, spent: 25 },
      { orders: 1, spent: 20 },
    ]);
    projectionId = notes[0].projectionId;
    expect(JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{\n') + 1))).toMatchObject({ state: { orders: 1, spent: 20 } });

    // The service agrees, and the deployed version is the walkthrough's source.
    const read = await tenant.get(`/projections/${encodeURIComponent(projectionId)}/state/c-1`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ state: { orders: 1, spent: 20 } });
    const status = await tenant.get(`/projections/${encodeURIComponent(projectionId)}/status`);
    expect(status.body).toMatchObject({ projectionId, status: 'compiled' });
  });

  it('fails `dotnet test` locally, at the line, where the server would refuse the upload', async () => {
    const source = path.join(solution, 'Totals', 'TotalsProjection.cs');
    const original = fs.readFileSync(source, 'utf8');
    const project = path.join(solution, 'Totals', 'Totals.csproj');
    const projectFile = fs.readFileSync(project, 'utf8');
    try {
      // DateTime.Now: in the server's reference set, refused by its allowlist (non-deterministic).
      const lines = original.split('\n');
      const at = lines.findIndex((l) => l.includes('state.Orders++;'));
      lines.splice(at + 1, 0, '                if (DateTime.Now.Year < 2000) state.Orders++;');
      fs.writeFileSync(source, lines.join('\n'));
      const why = "error ES0001: forbidden API: System.DateTime.Now (non-deterministic: use the event's Timestamp/ids instead)";
      // First wall: the SDK package's analyzer fails the build at the expression.
      const refused = await bash('dotnet test Totals.Tests 2>&1', solution, env);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toContain(`${source}(${at + 2},21): ${why}`);
      // Second wall, the analyzer off: the test kit's check of the built assembly (the server's IL verifier) at the statement.
      const checked = await bash('dotnet test Totals.Tests -p:EventSourcingAllowlist=false 2>&1', solution, env);
      expect(checked.code).not.toBe(0);
      expect(checked.stdout).toContain('AllowlistViolationException');
      expect(checked.stdout).toContain(`${source}(${at + 2},17): ${why}`);

      // Console: outside the server's reference set, so it does not compile, as on upload; a package reference is
      // left out of the compile with a warning saying why (the server compiles the uploaded sources alone).
      lines[at + 1] = '                Console.WriteLine("placed");';
      fs.writeFileSync(source, lines.join('\n'));
      fs.writeFileSync(
        project,
        projectFile.replace(
          '<PackageReference Include="EventSourcing.Sdk"',
          '<PackageReference Include="xunit.assert" Version="2.9.3" />\n    $&',
        ),
      );
      const unknown = await bash('dotnet build Totals 2>&1', solution, env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stdout).toContain(
        `TotalsProjection.cs(${at + 2},17): error CS0103: The name 'Console' does not exist in the current context`,
      );
      expect(unknown.stdout).toContain("warning ESSDK001: EventSourcing: xunit.assert is not in the server's reference set");
    } finally {
      fs.writeFileSync(source, original);
      fs.writeFileSync(project, projectFile);
    }
    // Back to the walkthrough's source: green again.
    const green = await bash('dotnet test Totals.Tests 2>&1', solution, env);
    expect(green.stdout).toMatch(/Passed!\s+-\s+Failed:\s+0, Passed:\s+4/);
  });

  it('accepts ordinary code locally as the server does: tests pass, and the same folder deploys as a new version', async () => {
    fs.writeFileSync(path.join(solution, 'Totals', 'Ordinary.cs'), ORDINARY);
    const tested = await bash('dotnet test Totals.Tests 2>&1', solution, env);
    expect(tested.stdout).not.toContain('AllowlistViolationException');
    expect(tested.stdout).toMatch(/Passed!\s+-\s+Failed:\s+0, Passed:\s+4/);

    const deployed = await bash(`npx --no --prefix ${JSON.stringify(REPO)} esctl deploy projection Totals`, solution, env);
    expect(deployed.stderr).not.toMatch(/error/);
    expect(deployed.code).toBe(0);
    // A new version of the same projection (the same name), not a second projection.
    expect(deployed.stdout).toMatch(new RegExp(`^projection ${projectionId} \\(TotalsProjection\\): version \\S+ deployed$`, 'm'));
    const listed = await tenant.get('/projections');
    expect(
      listed.body.projections
        .filter((p: { name: string }) => p.name === 'TotalsProjection')
        .map((p: { projectionId: string }) => p.projectionId),
    ).toEqual([projectionId]);
  });
});
