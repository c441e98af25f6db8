import fc from 'fast-check';
import { compact, payloadText, recordPayloadTexts, sourceTextOf } from './json-source-text';

const ISSUE_DATA = '{"amount":12345678901234567.89,"price":79.90,"big":79228162514264337593543950335,"id":9007199254740993}';

function recorded(text: string) {
  const parsed = JSON.parse(text);
  recordPayloadTexts(text, parsed);
  return parsed;
}

describe('the source text of append payloads', () => {
  it('keeps the issue’s event data as sent', () => {
    const body = recorded(`{"aggregateId":"pay-1","eventType":"Paid","data":${ISSUE_DATA}}`);
    expect(sourceTextOf(body.data)).toBe(ISSUE_DATA);
  });

  it('keeps digits, exponents, -0, integer-like key order and escapes; drops whitespace between tokens only', () => {
    const body = recorded(
      '{ "metadata" : { "b" : 1.10 , "2" : -0 } ,\n "data": {"z": 1E+2, "10": [ 1e400, -0.0 ], "s": "a \\" b\\u00e9 "}}',
    );
    expect(sourceTextOf(body.data)).toBe('{"z":1E+2,"10":[1e400,-0.0],"s":"a \\" b\\u00e9 "}');
    expect(sourceTextOf(body.metadata)).toBe('{"b":1.10,"2":-0}');
  });

  it('finds each batch element’s data, and the last of a repeated key as JSON.parse does', () => {
    const body = recorded(
      '{"data":{"n":1.0},"events":[{"data":{"n":2.50},"eventType":"A"},{"eventType":"B","data":{"n":3.0},"data":{"n":4.00}},7,{"x":[{"data":0}]}],"data":{"n":5.0}}',
    );
    expect(sourceTextOf(body.data)).toBe('{"n":5.0}');
    expect(body.events.slice(0, 2).map((e: { data: unknown }) => sourceTextOf(e.data))).toEqual(['{"n":2.50}', '{"n":4.00}']);
  });

  it('records nothing for payloads that are not objects or arrays, and for other fields', () => {
    const body = recorded('{"data":1.0,"other":{"a":1.0}}');
    expect(sourceTextOf(body.other)).toBeUndefined();
    expect(sourceTextOf(body.data)).toBeUndefined();
  });

  it('reads keys written with escapes', () => {
    const body = recorded('{"d\\u0061ta":{"k":0.10}}');
    expect(sourceTextOf(body.data)).toBe('{"k":0.10}');
  });

  it('leaves plain bodies to JSON.stringify, which gives their text anyway (the fast path)', () => {
    const body = recorded('{"data": {"a": 1, "b": [0.5, -3, 1e-7, "x 1.0"], "c": {"d": null}}}');
    expect(sourceTextOf(body.data)).toBeUndefined();
    expect(payloadText(body.data)).toBe('{"a":1,"b":[0.5,-3,1e-7,"x 1.0"],"c":{"d":null}}');
  });

  it('takes the scanning path for each thing JSON.stringify would change', () => {
    for (const data of ['{"a":1.0}', '{"a":9007199254740993}', '{"b":1,"2":2}', '{"s":"\\u00e9"}', '{"s":"\\/"}', '{"a":1e400}', '[-0]']) {
      expect(payloadText(recorded(`{"data":${data}}`).data)).toBe(data);
    }
  });

  it('compacts any JSON to what JSON.stringify writes for it when no number or key order is at stake', () => {
    // Random JSON without numbers (JSON.stringify would change those), written with random whitespace.
    const ws = fc.constantFrom('', ' ', '\n', '\t ', '\r\n  ');
    const tree = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    const write = (v: unknown, pad: () => string): string => {
      if (Array.isArray(v)) return `[${pad()}${v.map((x) => write(x, pad)).join(`${pad()},${pad()}`)}${pad()}]`;
      if (v !== null && typeof v === 'object')
        return `{${pad()}${Object.entries(v)
          .map(([k, x]) => `${JSON.stringify(k)}${pad()}:${pad()}${write(x, pad)}`)
          .join(`${pad()},${pad()}`)}${pad()}}`;
      return JSON.stringify(v);
    };
    fc.assert(
      fc.property(tree, fc.array(ws, { minLength: 1, maxLength: 8 }), (v, pads) => {
        let k = 0;
        const pad = () => pads[k++ % pads.length];
        const text = write({ data: { v } }, pad);
        const body = recorded(text);
        expect(payloadText(body.data)).toBe(JSON.stringify({ v }));
        expect(compact(write(v, pad))).toBe(JSON.stringify(v));
      }),
      { numRuns: 1000 },
    );
  });
});
