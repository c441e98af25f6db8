import { keyProblem, MAX_STATE_KEY_BYTES, UNRESOLVED_KEY } from './state-key-rule';

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
