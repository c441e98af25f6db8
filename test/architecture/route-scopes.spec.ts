import * as fs from 'node:fs';
import * as path from 'node:path';
import { API_SCOPES } from '../../src/tenancy/scopes';
import { appRoutes } from '../support/app-controllers';

/**
 * Every route an API key opens names the scope it needs (@RequiresScope), so a route added later
 * cannot forget one: it fails here. The README's route → scope table is compared with the routes
 * both ways, so the documented table is the enforced one.
 */
const KEY_ONLY = new Set(['GET /auth/whoami']);

const routes = appRoutes().filter((r) => (r.options.auth ?? 'key') === 'key');
const keyOf = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

/** `| \`GET /events/{aggregateId}\` | \`events:read\` |` rows between the README's markers. */
function readmeTable(): Map<string, string> {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const block = /<!-- route-scopes:start -->([\s\S]*?)<!-- route-scopes:end -->/.exec(readme);
  if (!block) throw new Error('README.md: the route-scopes table markers are missing');
  const rows = new Map<string, string>();
  for (const m of block[1].matchAll(/^\| `([A-Z]+ [^`]+)`[^|]*\| (`([a-z:]+)`|—[^|]*) \|$/gm)) rows.set(m[1], m[3] ?? '');
  return rows;
}

describe('scopes of the API-key routes', () => {
  it('every API-key route names a known scope, except the few that need only a valid key', () => {
    const missing = routes.filter((r) => !r.options.scope && !KEY_ONLY.has(keyOf(r))).map((r) => `${keyOf(r)} (${r.handler})`);
    expect(missing).toEqual([]);
    const unknown = routes.filter((r) => r.options.scope && !(API_SCOPES as readonly string[]).includes(r.options.scope));
    expect(unknown).toEqual([]);
    for (const key of KEY_ONLY) expect(routes.find((r) => keyOf(r) === key)?.options.scope).toBeUndefined();
  });

  it("the README's route → scope table is the routes' own", () => {
    const table = readmeTable();
    const actual = new Map(routes.map((r) => [keyOf(r), r.options.scope ?? '']));
    const rowOf = (key: string, scope: string) => `| \`${key}\` | ${scope ? `\`${scope}\`` : '— (any valid key)'} |`;
    const wrongOrMissing = [...actual].filter(([k, s]) => table.get(k) !== s).map(([k, s]) => rowOf(k, s));
    const stale = [...table.keys()].filter((k) => !actual.has(k));
    // The message is the rows to paste into README.md (section "API keys and scopes").
    expect({ addOrFix: wrongOrMissing, remove: stale }).toEqual({ addOrFix: [], remove: [] });
  });
});
