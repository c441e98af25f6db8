import { eventKeys, keyProblem, MAX_STATE_KEY_BYTES, UNRESOLVED_KEY } from './state-key-rule';

describe('keyProblem (the state-key rule)', () => {
  it('accepts keys up to 1,024 bytes of UTF-8, whatever their character count', () => {
    expect(MAX_STATE_KEY_BYTES).toBe(1024);
    expect(keyProblem('cust-3')).toBeNull();
    expect(keyProblem('a'.repeat(1024))).toBeNull();
    expect(keyProblem('漢'.repeat(341))).toBeNull(); // 1,023 bytes
    expect(keyProblem('😀'.repeat(256))).toBeNull(); // 1,024 bytes in 512 UTF-16 units
  });

  it('refuses keys over 1,024 bytes with KEY_TOO_LONG, naming the size', () => {
    expect(keyProblem('a'.repeat(1025))).toEqual({ code: 'KEY_TOO_LONG', message: expect.stringContaining('this one is 1025') });
    expect(keyProblem('漢'.repeat(1000))).toEqual({
      code: 'KEY_TOO_LONG',
      message: expect.stringContaining('this one is 3000 (1000 UTF-16 units)'),
    });
    expect(keyProblem('😀'.repeat(257))?.code).toBe('KEY_TOO_LONG');
  });

  it('refuses empty, reserved, control characters and lone surrogates with INVALID_KEY', () => {
    for (const k of ['', UNRESOLVED_KEY, 'a\u0000b', 'a\nb', '\u007f', 'a\uD800', '\uDC00b', 'x\uDBFF\uDBFF\uDC00']) {
      expect({ k, p: keyProblem(k)?.code }).toEqual({ k, p: 'INVALID_KEY' });
    }
    expect(keyProblem('\uD83D\uDE00')).toBeNull(); // a proper pair
  });
});

describe("eventKeys (one event's answer from resolveKeys)", () => {
  it('gives one key, several distinct keys in order, or none', () => {
    expect(eventKeys('a')).toEqual({ keys: ['a'] });
    expect(eventKeys(['s-2', 's-1', 's-2'])).toEqual({ keys: ['s-2', 's-1'] });
    expect(eventKeys([])).toEqual({ keys: [] });
    expect(eventKeys(null)).toEqual({ keys: [] });
  });

  it('applies the key rule to each key: one refused key refuses the event, never to be passed by a retry', () => {
    expect(eventKeys(['ok', UNRESOLVED_KEY])).toEqual({ error: expect.stringContaining('INVALID_KEY'), retryable: false });
    expect(eventKeys(['ok', 'é'.repeat(513)])).toEqual({ error: expect.stringContaining('KEY_TOO_LONG'), retryable: false });
    expect(eventKeys('')).toEqual({ error: expect.stringContaining('INVALID_KEY'), retryable: false });
  });

  it("passes on the host's refusals, a thrown ResolveKeys retryable and a too-long key not", () => {
    expect(eventKeys({ error: { code: 'RESOLVE_FAILED', message: 'boom' } })).toEqual({ error: 'RESOLVE_FAILED: boom', retryable: true });
    expect(eventKeys({ error: { code: 'KEY_TOO_LONG', message: 'long' } })).toEqual({ error: 'KEY_TOO_LONG: long', retryable: false });
  });
});
