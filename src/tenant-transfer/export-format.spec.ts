import { checkTrailer, parseHeader, parseLine } from './export-format';
import { exportedTable, exportPlan, importable } from './transfer-tables';

const header = (over: Record<string, unknown> = {}) =>
  JSON.stringify({ format: 'eventstore-export', version: 1, tenantId: 't1', exportedAt: 'x', schemaVersion: 5, store: 'sqlite', ...over });

describe('export format', () => {
  it('takes a header of this format and refuses anything else, and an export of a newer schema', () => {
    expect(parseHeader(header(), 5)).toMatchObject({ tenantId: 't1', schemaVersion: 5 });
    expect(parseHeader(header({ schemaVersion: 3 }), 5)).toMatchObject({ schemaVersion: 3 });
    expect(() => parseHeader(undefined, 5)).toThrow(expect.objectContaining({ code: 'IMPORT_TRUNCATED' }));
    expect(() => parseHeader('{"format":"other"}', 5)).toThrow(expect.objectContaining({ code: 'IMPORT_INVALID' }));
    expect(() => parseHeader(header({ version: 2 }), 5)).toThrow(/format version 2/);
    expect(() => parseHeader(header({ tenantId: '' }), 5)).toThrow(/tenantId/);
    expect(() => parseHeader(header({ schemaVersion: 6 }), 5)).toThrow(/newer schema/);
    expect(() => parseHeader('[1]', 5)).toThrow(/not a JSON object/);
  });

  it('tells rows from the trailer and refuses other lines with their number', () => {
    expect(parseLine('{"table":"events","row":{"a":1}}', 7)).toEqual({ kind: 'row', table: 'events', row: { a: 1 } });
    expect(parseLine('{"end":true,"rows":1,"counts":{"events":1}}', 8)).toMatchObject({ kind: 'trailer' });
    expect(() => parseLine('{"table":"events","row":[1]}', 9)).toThrow(
      expect.objectContaining({ code: 'IMPORT_INVALID', details: { line: 9 } }),
    );
    expect(() => parseLine('{"end":true}', 10)).toThrow(/malformed trailer/);
    expect(() => parseLine('{"tab', 11)).toThrow(/line 11: not JSON/);
  });

  it('refuses a file without its trailer or with counts that differ', () => {
    const counts = new Map([
      ['events', 2],
      ['tenants', 1],
    ]);
    expect(() => checkTrailer({ end: true, rows: 3, counts: { tenants: 1, events: 2 } }, counts, 3)).not.toThrow();
    expect(() => checkTrailer(undefined, counts, 3)).toThrow(expect.objectContaining({ code: 'IMPORT_TRUNCATED' }));
    expect(() => checkTrailer({ end: true, rows: 4, counts: { tenants: 1, events: 3 } }, counts, 3)).toThrow(/lines are missing/);
    expect(() => checkTrailer({ end: true, rows: 3, counts: { tenants: 1, streams: 2 } }, counts, 3)).toThrow(
      expect.objectContaining({ code: 'IMPORT_TRUNCATED' }),
    );
  });
});

describe('transfer tables', () => {
  const shape = (name: string) => ({ name, columns: [{ name: 'tenant_id', kind: 'plain' as const }], primaryKey: ['tenant_id'] });

  it('exports the listed tables in their order, then any unlisted one (named), never a derived one', () => {
    const plan = exportPlan(['events', 'snapshots', 'new_thing', 'tenants', 'api_keys', 'lanes'].map(shape));
    expect(plan.tables.map((t) => t.name)).toEqual(['tenants', 'api_keys', 'events', 'new_thing']);
    expect(plan.unclassified).toEqual(['new_thing']);
    const shapes = new Map(['events', 'snapshots'].map((n) => [n, shape(n)]));
    expect(importable('events', shapes)).toBe(true);
    expect(importable('snapshots', shapes)).toBe(false);
    expect(importable('nowhere', shapes)).toBe(false);
  });

  it('resets what belongs to the source instance or is rebuilt: claims, routing, catch-up', () => {
    expect(exportedTable('uploads')!.onImport!({ upload_id: 'u', claim_owner: 'i1', claim_until: 5 }, { headPosition: 9 })).toEqual({
      upload_id: 'u',
      claim_owner: null,
      claim_until: null,
    });
    expect(
      exportedTable('projection_versions')!.onImport!(
        { version_id: 'v', routed_position: 7, caught_up_at: 3, target_position: 4 },
        { headPosition: 9 },
      ),
    ).toEqual({ version_id: 'v', routed_position: 0, caught_up_at: null, target_position: 9 });
  });

  it('gives each projection its notification head, and a webhook projection a suspension', () => {
    const alongside = exportedTable('projections')!.alongside!;
    expect(alongside({ tenant_id: 't', projection_id: 'p', webhook_url: null }).map((r) => r.table)).toEqual(['notification_heads']);
    const withHook = alongside({ tenant_id: 't', projection_id: 'p', webhook_url: 'https://x' });
    expect(withHook.map((r) => r.table)).toEqual(['notification_heads', 'webhook_suspensions']);
    expect(withHook[1].row).toMatchObject({ tenant_id: 't', projection_id: 'p', resume_sequence: 1, reason: 'imported' });
  });

  it('makes an event line’s tag index rows from its tags, and refuses tags that are not a JSON array of distinct strings', () => {
    const alongside = exportedTable('events')!.alongside!;
    expect(alongside({ tenant_id: 't', position: 4, tags: null })).toEqual([]);
    expect(alongside({ tenant_id: 't', position: 4, tags: '["a","b"]' })).toEqual([
      { table: 'event_tags', row: { tenant_id: 't', tag: 'a', position: 4 } },
      { table: 'event_tags', row: { tenant_id: 't', tag: 'b', position: 4 } },
    ]);
    // The append's own rules (parseEventTags): what no append could have stored is refused.
    const tooMany = JSON.stringify(Array.from({ length: 21 }, (_, i) => `t${i}`));
    for (const tags of [
      '["a","a"]',
      '[1]',
      '{"a":1}',
      'nope',
      7,
      '[]',
      '[""]',
      tooMany,
      JSON.stringify(['x'.repeat(201)]),
      '["\\ud800"]',
    ]) {
      expect(() => alongside({ tenant_id: 't', position: 4, tags })).toThrow(expect.objectContaining({ code: 'IMPORT_INVALID' }));
    }
  });
});
