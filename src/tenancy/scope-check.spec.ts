import { parseKeySpec } from './key-spec';
import { effectiveScopes, missingScope, parseScopes, scopeCheck, storedScopes, ungrantable } from './scope-check';
import { API_SCOPES } from './scopes';

describe('scope checks', () => {
  it('a key without a list (null) holds every scope; a list holds only its own', () => {
    for (const s of API_SCOPES) expect(missingScope(null, s)).toBeNull();
    expect(missingScope(['events:read'], 'events:read')).toBeNull();
    expect(missingScope(['events:read'], 'events:write')).toBe('events:write');
    expect(missingScope([], 'state:read')).toBe('state:read');
  });

  it('a route without a scope needs only a valid key, even one with no scopes', () => {
    expect(missingScope([], undefined)).toBeNull();
  });

  it('refuses with 403 FORBIDDEN naming the missing scope', () => {
    expect(scopeCheck(['deploy'], 'events:erase')).toMatchObject({ code: 'FORBIDDEN', details: { missingScope: 'events:erase' } });
    expect(scopeCheck(['deploy'], 'deploy')).toBeNull();
  });

  it('spells out every scope of a key without a list, in the list order', () => {
    expect(effectiveScopes(null)).toEqual([...API_SCOPES]);
    expect(effectiveScopes(['keys:manage', 'events:read'])).toEqual(['events:read', 'keys:manage']);
  });

  it('parses a scope list: known names, duplicates dropped, in list order; anything else refused', () => {
    expect(parseScopes(['state:read', 'events:read', 'state:read'])).toEqual(['events:read', 'state:read']);
    expect(parseScopes([])).toEqual([]);
    expect(() => parseScopes('events:read')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => parseScopes(['events:*'])).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => parseScopes([1])).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('a maker may grant only what it holds', () => {
    expect(ungrantable(null, [...API_SCOPES])).toBeNull();
    expect(ungrantable(['keys:manage', 'events:read'], ['events:read'])).toBeNull();
    expect(ungrantable(['keys:manage', 'events:read'], ['events:read', 'deploy'])).toBe('deploy');
  });

  it('reads stored scopes without widening: null stays every scope, unknown names are dropped', () => {
    expect(storedScopes(null)).toBeNull();
    expect(storedScopes(undefined)).toBeNull();
    expect(storedScopes(['events:read', 'admin:everything'])).toEqual(['events:read']);
  });
});

describe('parseKeySpec', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('requires scopes and name on POST /auth/keys, not on the admin API', () => {
    expect(() => parseKeySpec({ name: 'x' }, now, true)).toThrow(expect.objectContaining({ details: { field: 'scopes' } }));
    expect(() => parseKeySpec({ scopes: [] }, now, true)).toThrow(expect.objectContaining({ details: { field: 'name' } }));
    expect(parseKeySpec(undefined, now, false)).toEqual({ scopes: null, name: null, expiresAt: null });
  });

  it('takes an expiry in the future with a zone; refuses past, zoneless and unknown fields', () => {
    expect(parseKeySpec({ scopes: ['deploy'], name: 'ci', expiresAt: '2026-02-01T00:00:00Z' }, now, true)).toEqual({
      scopes: ['deploy'],
      name: 'ci',
      expiresAt: Date.parse('2026-02-01T00:00:00Z'),
    });
    for (const expiresAt of ['2025-12-31T00:00:00Z', '2026-02-01', '2026-02-01T00:00:00', 12345, 'soon']) {
      expect(() => parseKeySpec({ scopes: [], name: 'x', expiresAt }, now, true)).toThrow(
        expect.objectContaining({ details: { field: 'expiresAt' } }),
      );
    }
    expect(() => parseKeySpec({ scopes: [], name: 'x', admin: true }, now, true)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    expect(() => parseKeySpec([], now, false)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});
