import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readSourceArchive } from '../../tenant-code/compiler/archive-reader';
import { diagnosticsOf, formatDiagnostic } from './diagnostics';
import { loadConfig, saveConfig } from './esctl-config';
import { parseArgs } from './esctl';
import { collectSources, zipSources } from './source-archive';
import { afterClose } from './tail';

describe('esctl', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esctl-spec-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('zips only the .cs sources (bin/ and obj/ skipped, nested folders kept) into an archive the service reads back', async () => {
    const dir = tmp();
    fs.mkdirSync(path.join(dir, 'Domain'));
    fs.mkdirSync(path.join(dir, 'obj'));
    fs.writeFileSync(path.join(dir, 'Reducer.cs'), 'public class R {} // é');
    fs.writeFileSync(path.join(dir, 'Domain', 'Events.cs'), 'public record E();');
    fs.writeFileSync(path.join(dir, 'obj', 'Generated.cs'), 'garbage');
    fs.writeFileSync(path.join(dir, 'App.csproj'), '<Project/>');
    const files = collectSources(dir);
    expect(files.map((f) => f.path)).toEqual(['Domain/Events.cs', 'Reducer.cs']);
    const read = await readSourceArchive(zipSources(files));
    expect(read.map((f) => [f.path, f.content])).toEqual([
      ['Domain/Events.cs', 'public record E();'],
      ['Reducer.cs', 'public class R {} // é'],
    ]);
  });

  it("prints the host's compilationError lines in the compiler's shape, located or not", () => {
    const text = [
      'Compilation failed',
      "Broken.cs(3,17): error CS0103: The name 'x' does not exist in the current context",
      'error ES0002: forbidden construct: static readonly field',
    ].join('\n');
    expect(diagnosticsOf({ compilationError: text }).map(formatDiagnostic)).toEqual([
      'error: Compilation failed',
      "Broken.cs(3,17): error CS0103: The name 'x' does not exist in the current context",
      'error ES0002: forbidden construct: static readonly field',
    ]);
  });

  it('reads a structured diagnostics array as is (the validate answer to come), with its hint', () => {
    const d = diagnosticsOf({
      diagnostics: [{ file: 'A.cs', line: 2, column: 5, severity: 'warning', code: 'CS8618', message: 'non-nullable', hint: 'add ?' }],
    });
    expect(d.map(formatDiagnostic)).toEqual(['A.cs(2,5): warning CS8618: non-nullable (hint: add ?)']);
  });

  it('saves the login 0600 (narrowing an existing file) and lets the environment override it', () => {
    const file = path.join(tmp(), 'nested', 'config.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{}', { mode: 0o644 });
    saveConfig({ url: 'http://h:1', apiKey: 'esk_a' }, file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConfig({}, file)).toEqual({ url: 'http://h:1', apiKey: 'esk_a' });
    expect(loadConfig({ ESCTL_URL: 'http://other:2/' }, file)).toEqual({ url: 'http://other:2', apiKey: 'esk_a' });
    expect(loadConfig({}, path.join(path.dirname(file), 'none.json'))).toBeNull();
  });

  it('tail resumes where the server says after a slow-consumer close, after the last printed one on a drop, and fails on the rest', () => {
    expect(afterClose(1000, '', '7')).toEqual({ done: true });
    expect(afterClose(4008, '{"code":"SLOW_CONSUMER","resumeAfterSequence":42}', '50')).toEqual({ resumeAfter: '42' });
    expect(afterClose(4008, 'slow', '50')).toEqual({ resumeAfter: '50' });
    expect(afterClose(1006, '', '9')).toEqual({ resumeAfter: '9' });
    // Live only and nothing printed yet: no position to resume from without a gap.
    expect(afterClose(1006, '', undefined)).toEqual({ fail: 'stream closed: 1006' });
    expect(afterClose(4010, '{"code":"CURSOR_EXPIRED","oldestSequence":3}', '1')).toEqual({
      fail: 'stream closed: 4010 {"code":"CURSOR_EXPIRED","oldestSequence":3}',
    });
    expect(afterClose(4001, '{"code":"KEY_REVOKED"}', '1')).toEqual({ fail: 'stream closed: 4001 {"code":"KEY_REVOKED"}' });
  });

  it('parses options in both spellings and refuses one without its value', () => {
    expect(parseArgs(['deploy', 'reducer', 'dir', '--id', 'r1', '--timeout=5'])).toEqual({
      positional: ['deploy', 'reducer', 'dir'],
      options: new Map([
        ['id', 'r1'],
        ['timeout', '5'],
      ]),
    });
    expect(() => parseArgs(['tail', 'p', '--count'])).toThrow(/--count needs a value/);
  });

  it('takes --no-bind as a flag, leaving the next word positional', () => {
    expect(parseArgs(['deploy', '--no-bind', 'reducer', 'dir'])).toEqual({
      positional: ['deploy', 'reducer', 'dir'],
      options: new Map([['no-bind', 'true']]),
    });
  });
});
