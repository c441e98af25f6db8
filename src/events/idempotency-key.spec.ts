import { DomainError } from '../common/domain-error';
import { IDEMPOTENCY_KEY_MAX, parseIdempotencyKey } from './idempotency-key';

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as DomainError).code;
  }
  return 'none';
};

describe('parseIdempotencyKey', () => {
  it('takes a bare key as is and a quoted one without its quotes', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(parseIdempotencyKey('"8e03978e"')).toBe('8e03978e');
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toBe('a"b\\c');
    expect(parseIdempotencyKey('x'.repeat(IDEMPOTENCY_KEY_MAX))).toHaveLength(IDEMPOTENCY_KEY_MAX);
  });

  it.each([
    ['empty', ''],
    ['empty quoted', '""'],
    ['too long', 'x'.repeat(IDEMPOTENCY_KEY_MAX + 1)],
    ['a space', 'a b'],
    ['a quoted space', '"a b"'],
    ['non-ASCII', 'clé'],
    ['a control character', 'a\u0001b'],
    ['an unescaped quote inside quotes', '"a"b"'],
    ['a bad escape', '"a\\nb"'],
  ])('refuses %s with 400 INVALID_IDEMPOTENCY_KEY', (_what, value) => {
    expect(code(() => parseIdempotencyKey(value))).toBe('INVALID_IDEMPOTENCY_KEY');
  });

  it('refuses the header sent twice', () => {
    expect(code(() => parseIdempotencyKey(['a', 'b']))).toBe('INVALID_IDEMPOTENCY_KEY');
  });
});
