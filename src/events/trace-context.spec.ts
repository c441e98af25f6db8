import { callerTraceContext, TRACESTATE_MAX_CHARS, validTraceParent, validTraceState } from './trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const TP = `00-${TRACE}-${PARENT}-01`;

describe('validTraceParent', () => {
  it('keeps a version 00 traceparent exactly', () => {
    expect(validTraceParent(TP)).toBe(TP);
    expect(validTraceParent(`00-${TRACE}-${PARENT}-00`)).toBe(`00-${TRACE}-${PARENT}-00`);
  });

  it('reads a later version by its first fields and keeps it as version 00', () => {
    expect(validTraceParent(`01-${TRACE}-${PARENT}-01`)).toBe(TP);
    expect(validTraceParent(`cc-${TRACE}-${PARENT}-01-what-follows`)).toBe(TP);
    expect(validTraceParent(`cc-${TRACE}-${PARENT}-01x`)).toBeUndefined();
  });

  it('refuses what the spec calls invalid', () => {
    for (const bad of [
      '',
      'garbage',
      `ff-${TRACE}-${PARENT}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE}-${PARENT}-01-extra`,
      `00-${TRACE}-${PARENT}-1`,
      ` ${TP}`,
      `${TP}, ${TP}`,
    ])
      expect(validTraceParent(bad)).toBeUndefined();
  });
});

describe('validTraceState', () => {
  it('keeps a valid list as sent', () => {
    for (const ok of ['rojo=00f067aa0ba902b7', 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7', 'a=1,,b=2', 'tenant1@vendor=x y', 'k=v ,\tz=w'])
      expect(validTraceState(ok)).toBe(ok);
  });

  it('drops an invalid one', () => {
    for (const bad of ['', ',', 'noequals', 'Upper=1', 'k=v=w', 'k=in side\u0001', 'k=ü', `k=${'v'.repeat(TRACESTATE_MAX_CHARS)}`])
      expect(validTraceState(bad)).toBeUndefined();
    expect(validTraceState(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBeUndefined();
  });
});

describe('callerTraceContext', () => {
  it('keeps tracestate only with a valid traceparent', () => {
    expect(callerTraceContext(TP, 'rojo=1')).toEqual({ traceParent: TP, traceState: 'rojo=1' });
    expect(callerTraceContext(TP, 'bad state')).toEqual({ traceParent: TP });
    expect(callerTraceContext('bad', 'rojo=1')).toEqual({});
    expect(callerTraceContext(undefined, undefined)).toEqual({});
    expect(callerTraceContext([TP, TP], undefined)).toEqual({});
    expect(callerTraceContext(TP, ['a=1', 'b=2'])).toEqual({ traceParent: TP, traceState: 'a=1,b=2' });
  });
});
