import { applyJsonPatch, jsonPatch } from './json-patch.util';

describe('jsonPatch (RFC 6902 diff of two states)', () => {
  it('is empty for equal documents, whatever the member order', () => {
    expect(jsonPatch({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toEqual([]);
  });

  it('names each changed, added and removed member by its JSON Pointer', () => {
    expect(jsonPatch({ total: 10, gone: true, keep: 'x' }, { total: 12, keep: 'x', added: [1] })).toEqual([
      { op: 'remove', path: '/gone' },
      { op: 'replace', path: '/total', value: 12 },
      { op: 'add', path: '/added', value: [1] },
    ]);
  });

  it('escapes ~ and / in member names (RFC 6901)', () => {
    expect(jsonPatch({}, { 'a/b~c': 1 })).toEqual([{ op: 'add', path: '/a~1b~0c', value: 1 }]);
  });

  it('diffs arrays element by element, removing from the end backwards', () => {
    expect(jsonPatch([1, 2, 3, 4], [1, 5])).toEqual([
      { op: 'replace', path: '/1', value: 5 },
      { op: 'remove', path: '/3' },
      { op: 'remove', path: '/2' },
    ]);
  });

  it('replaces the whole document when its kind changes', () => {
    expect(jsonPatch({ a: 1 }, [1])).toEqual([{ op: 'replace', path: '', value: [1] }]);
    expect(jsonPatch(null, { a: 1 })).toEqual([{ op: 'replace', path: '', value: { a: 1 } }]);
  });

  it.each([
    [
      { a: { b: [1, 2, { c: 'x' }] }, d: 1 },
      { a: { b: [1, { c: 'y' }] }, e: null },
    ],
    [
      [{ id: 1 }, { id: 2 }],
      [{ id: 1, n: 2 }, { id: 2 }, { id: 3 }],
    ],
    [{ lines: ['a', 'b'] }, { lines: [] }],
    ['text', 3],
  ])('turns the first document into the second when applied (%#)', (from, to) => {
    expect(applyJsonPatch(from, jsonPatch(from, to))).toEqual(to);
  });
});
