import fc from 'fast-check';
import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json';
import { numbersSurviveDoubles, parseExactly } from './exact-json';
import { RawJson, stringifyJson } from './raw-json';

const ISSUE_BODY = '{"amount":12345678901234567.89,"price":79.90,"big":79228162514264337593543950335,"id":9007199254740993}';

describe('parseExactly + stringifyJson', () => {
  it('keeps every digit of the issue’s event', () => {
    expect(stringifyJson(parseExactly(ISSUE_BODY))).toBe(ISSUE_BODY);
  });

  it('keeps exponents, -0, trailing zeros and key order as written; drops whitespace', () => {
    const text = '{ "z": 1E+2, "a": [-0, 1.0, 0.10, 1e-7, 2.5E-3], "m": {"x": -0.0} }';
    expect(stringifyJson(parseExactly(text))).toBe('{"z":1E+2,"a":[-0,1.0,0.10,1e-7,2.5E-3],"m":{"x":-0.0}}');
  });

  it('returns JSON.parse’s own value when every number survives a double (the fast path)', () => {
    const text = '{"a":1,"b":[0.5,-3,1e-7],"s":"79.90 inside a string stays a string"}';
    expect(numbersSurviveDoubles(text)).toBe(true);
    expect(parseExactly(text)).toEqual(JSON.parse(text));
  });

  it('does not take digits inside strings, keys or escapes for numbers', () => {
    const text = '{"79.90":"1.0","k\\"1.0":["\\\\", "x\\"2.50"],"n":2.50}';
    const v = parseExactly(text) as Record<string, unknown>;
    expect(v['79.90']).toBe('1.0');
    expect(v['k"1.0']).toEqual(['\\', 'x"2.50']);
    expect(v.n).toBeInstanceOf(RawJson);
    expect(stringifyJson(v)).toBe(text.replace(', ', ','));
  });

  it('keeps JSON.parse’s rules: the last duplicate key wins, any depth, a bare number', () => {
    expect(stringifyJson(parseExactly('{"a":1.0,"a":2.0}'))).toBe('{"a":2.0}');
    const deep = '['.repeat(2_000) + '1.0' + ']'.repeat(2_000);
    expect(stringifyJson(parseExactly(deep))).toBe(deep);
    expect(parseExactly('79.90')).toEqual(new RawJson('79.90'));
  });

  it('never sets a prototype from a "__proto__" key', () => {
    const v = parseExactly('{"__proto__":1.50}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(stringifyJson(v)).toBe('{"__proto__":1.50}');
  });

  it('round-trips any JSON with any numbers exactly (lossless-json as the reference)', () => {
    // Numbers as text: integers of any length, decimals with trailing zeros, exponents, -0.
    const numberText = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,30}$/)),
        fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,3}$/)), { nil: undefined }),
      )
      .map(([sign, int, frac, exp]) => `${sign}${int}${frac !== undefined ? '.' + frac : ''}${exp ? exp.join('') : ''}`);
    const tree = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        numberText.map((t) => ({ __n: t })),
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 5 }),
      ),
    })).value;
    const write = (v: unknown): string => {
      if (v !== null && typeof v === 'object' && '__n' in (v as object) && Object.keys(v as object).length === 1) return (v as { __n: string }).__n;
      if (Array.isArray(v)) return `[${v.map(write).join(', ')}]`;
      if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${write(x)}`).join(', ')}}`;
      return JSON.stringify(v);
    };
    fc.assert(
      fc.property(tree, (v) => {
        const text = write(v);
        const reference = losslessStringify(losslessParse(text));
        expect(stringifyJson(parseExactly(text))).toBe(reference);
      }),
      { numRuns: 500 },
    );
  });
});

describe('RawJson', () => {
  it('is spliced verbatim anywhere in a value', () => {
    expect(stringifyJson({ a: [new RawJson('{"x":1.10}'), 2], b: new RawJson('null') })).toBe('{"a":[{"x":1.10},2],"b":null}');
  });

  it('refuses plain JSON.stringify, which could not keep it exact', () => {
    expect(() => JSON.stringify({ a: new RawJson('1.0') })).toThrow(/stringifyJson/);
  });

  it('cannot be forged by a string that looks like a placeholder', () => {
    const s = '\u00000:0';
    expect(stringifyJson({ s, r: new RawJson('1.0') })).toBe(`{"s":${JSON.stringify(s)},"r":1.0}`);
  });
});
