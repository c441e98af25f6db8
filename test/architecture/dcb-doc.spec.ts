import fs from 'node:fs';
import path from 'node:path';

// docs/dcb.md shows its worked examples' client code; test/e2e/dcb-examples.e2e-spec.ts runs that code
// from test/support/dcb-clients.ts. This keeps them one: every TypeScript block of the page must be
// in that file verbatim, and every example function of the file must be shown.
const ROOT = path.resolve(__dirname, '..', '..');
const doc = fs.readFileSync(path.join(ROOT, 'docs', 'dcb.md'), 'utf8');
const clients = fs.readFileSync(path.join(ROOT, 'test', 'support', 'dcb-clients.ts'), 'utf8');
const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1].trimEnd());

describe('docs/dcb.md', () => {
  it('shows the examples exactly as the tests run them', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    for (const b of blocks) expect({ block: b, inClients: clients.includes(b) }).toEqual({ block: b, inClients: true });
  });

  it('shows every example client', () => {
    for (const name of ['readAll', 'appendOrConflict', 'subscribe', 'register', 'rename', 'numberInvoice', 'claims'])
      expect(blocks.some((b) => new RegExp(`(function|const) ${name}\\b`).test(b))).toBe(true);
  });

  it('is linked from the README', () => {
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('(docs/dcb.md)');
  });
});
