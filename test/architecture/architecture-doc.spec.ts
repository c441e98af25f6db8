import fs from 'node:fs';
import path from 'node:path';

// ARCHITECTURE.md names the hops of an event as `Class.method` and files by path: this keeps each
// name true (a renamed class, method or file fails here, not in a newcomer's search).
const ROOT = path.resolve(__dirname, '..', '..');
const doc = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [p] : [];
  });
}
const sources = sourceFiles(path.join(ROOT, 'src')).map((file) => ({ file, text: fs.readFileSync(file, 'utf8') }));

/** Names of the form Type.member that are not ours (the .NET host's files, the JS library). */
const NOT_OURS = new Set(['JSON.stringify', 'CpuPriority.cs']);

/** The body of `class|interface Name … { … }` (to the next top-level closing brace). */
function declaration(name: string): string | null {
  const head = new RegExp(`^(?:export )?(?:abstract )?(?:class|interface) ${name}\\b[^\\n]*\\{\\n`, 'm');
  for (const s of sources) {
    const m = head.exec(s.text);
    if (m) return s.text.slice(m.index, s.text.indexOf('\n}\n', m.index) + 2);
  }
  return null;
}

describe('ARCHITECTURE.md names what exists', () => {
  const refs = [...new Set(doc.match(/\b[A-Z][A-Za-z0-9]+\.[a-z][A-Za-z0-9]*\b/g) ?? [])].filter((r) => !NOT_OURS.has(r));
  const paths = [...new Set(doc.match(/\b(?:src\/|test\/)?[a-z0-9_-]+(?:\/[a-z0-9_.-]+)*\.(?:ts|mjs|json)\b/g) ?? [])].filter((p) =>
    p.includes('/'),
  );

  it('finds names and paths to check', () => {
    expect(refs.length).toBeGreaterThan(20);
    expect(paths.length).toBeGreaterThan(5);
  });

  it.each(refs)('%s: the class or interface declares that member', (ref) => {
    const [type, member] = ref.split('.');
    const body = declaration(type);
    expect({ ref, declared: body !== null }).toEqual({ ref, declared: true });
    expect({
      ref,
      member: new RegExp(
        `^\\s+(?:(?:private|protected|public|readonly|static|async|get|abstract)\\s+)*${member}\\b\\??\\s*[(:<=]`,
        'm',
      ).test(body!),
    }).toEqual({
      ref,
      member: true,
    });
  });

  it.each(paths)('%s exists (from the repository root, src/ or test/)', (p) => {
    const found = [p, `src/${p}`].some((c) => fs.existsSync(path.join(ROOT, c)));
    expect({ path: p, found }).toEqual({ path: p, found: true });
  });
});
