import { DomainError } from '../common/domain-error';

/** Longest Idempotency-Key accepted, in characters (= bytes: visible ASCII only). */
export const IDEMPOTENCY_KEY_MAX = 255;

/** Visible ASCII (0x21-0x7E), no space. */
const BARE = /^[\x21-\x7e]+$/;
/** The inside of a quoted form: visible ASCII with `"` and `\` escaped by a backslash. */
const QUOTED = /^(?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/;

/**
 * The Idempotency-Key header (IETF httpapi-idempotency-key-header): 1 to 255 visible ASCII
 * characters (0x21-0x7E, so no space). The draft makes it a Structured Field string (`"…"`): a
 * quoted value is taken without its quotes (`\"` and `\\` unescaped); a bare value (what most clients
 * send) is taken as is, so `"abc"` and `abc` are one key. Anything else, or the header sent twice, is
 * 400 INVALID_IDEMPOTENCY_KEY. Absent: undefined.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw invalid('must be sent once');
  const raw = header.trim();
  let key = raw;
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) {
    const inner = raw.slice(1, -1);
    if (!QUOTED.test(inner)) throw invalid('is not a valid quoted string of visible ASCII characters');
    key = inner.replace(/\\(["\\])/g, '$1');
  }
  if (key.length === 0) throw invalid('must not be empty');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw invalid(`must be at most ${IDEMPOTENCY_KEY_MAX} characters`);
  if (!BARE.test(key)) throw invalid('must be visible ASCII characters (0x21-0x7E), without spaces');
  return key;
}

function invalid(why: string): DomainError {
  return new DomainError('INVALID_IDEMPOTENCY_KEY', `Idempotency-Key ${why}`, { field: 'Idempotency-Key' });
}
