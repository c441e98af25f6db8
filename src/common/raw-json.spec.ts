import { RawJson, stringifyJson } from './raw-json';

describe('RawJson', () => {
  it('is spliced verbatim anywhere in a value', () => {
    expect(stringifyJson({ a: [new RawJson('{"x":1.10,"2":0}'), 2], b: new RawJson('null') })).toBe('{"a":[{"x":1.10,"2":0},2],"b":null}');
    expect(stringifyJson(new RawJson('79.90'))).toBe('79.90');
  });

  it('costs nothing extra for values without one', () => {
    const v = { a: 'x', b: [1, 2, { c: null }] };
    expect(stringifyJson(v)).toBe(JSON.stringify(v));
  });

  it('refuses plain JSON.stringify, which could not keep it exact', () => {
    expect(() => JSON.stringify({ a: new RawJson('1.0') })).toThrow(/stringifyJson/);
  });

  it('cannot be forged by a string that looks like a placeholder', () => {
    const s = '\u00000:0';
    expect(stringifyJson({ s, r: new RawJson('1.0') })).toBe(`{"s":${JSON.stringify(s)},"r":1.0}`);
  });
});
