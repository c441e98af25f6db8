import { MAX_PATH_PARAM_BYTES } from '../common/url-limits';
import { ResolvedKey } from '../tenant-code/host/runtime-protocol';

/**
 * Where events go whose ResolveKey kept throwing (or gave a key the store cannot hold): a lane of
 * its own, held, for an operator to see. A reserved key: a projection's own key of this name is
 * treated as unresolvable too.
 */
export const UNRESOLVED_KEY = '!unresolved';

/**
 * The one state-key rule, the same on every store: at most this many bytes of UTF-8. In bytes
 * because that is what indexes hold: PostgreSQL's btree refuses a row over ~2,700 bytes, which 1,000
 * CJK characters (3,000 bytes) already were, and the lane then could never be routed. 1,024 bytes
 * fit every index that holds a key (lane_inbox, lanes, webhook_deliveries) beside its other columns,
 * and a path parameter (MAX_PATH_PARAM_BYTES), so every key that is accepted can be read, retried
 * and skipped over HTTP.
 */
export const MAX_STATE_KEY_BYTES = MAX_PATH_PARAM_BYTES;

/** No control characters: keys go into URLs and every store's text columns (PostgreSQL refuses NUL). */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A surrogate without its pair is no Unicode text: UTF-8 cannot carry it, so a store would keep another key. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface KeyProblem {
  /** KEY_TOO_LONG (over MAX_STATE_KEY_BYTES, as the host says of a key over its character cap) or INVALID_KEY. */
  code: 'KEY_TOO_LONG' | 'INVALID_KEY';
  message: string;
}

/** Why a key from ResolveKey cannot be a lane, or null. Checked before routing: a refused key holds its event in UNRESOLVED_KEY. */
export function keyProblem(key: string): KeyProblem | null {
  if (key === UNRESOLVED_KEY) return { code: 'INVALID_KEY', message: `the key '${UNRESOLVED_KEY}' is reserved` };
  if (key.length === 0) return { code: 'INVALID_KEY', message: 'a state key must not be empty' };
  // A UTF-16 unit is at most 3 bytes of UTF-8: short keys need no count.
  if (key.length * 3 > MAX_STATE_KEY_BYTES) {
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes > MAX_STATE_KEY_BYTES) {
      return {
        code: 'KEY_TOO_LONG',
        message: `a state key is at most ${MAX_STATE_KEY_BYTES} bytes of UTF-8; this one is ${bytes} (${key.length} UTF-16 units)`,
      };
    }
  }
  if (CONTROL.test(key)) return { code: 'INVALID_KEY', message: 'a state key must not contain control characters' };
  if (LONE_SURROGATE.test(key)) return { code: 'INVALID_KEY', message: 'a state key must be valid Unicode (it holds a lone surrogate)' };
  return null;
}

/** The held lane's error text for a refused key: the code first, as for the host's own refusals. */
export function keyProblemText(p: KeyProblem): string {
  return `${p.code}: ${p.message}`;
}

/**
 * What one event's answer from resolveKeys means for routing: the keys it goes to (none: not this
 * projection's event; several: an IResolveKeys projection, each distinct key once, in its order), or
 * why it cannot be routed. All or nothing: one refused key of several holds the whole event in
 * UNRESOLVED_KEY, so an operator's retry routes it again whole (never to some of its keys twice).
 * `retryable`: a ResolveKey(s) that threw may pass next time; a refused key will be refused again.
 */
export type EventKeys = { keys: string[] } | { error: string; retryable: boolean };

export function eventKeys(k: ResolvedKey): EventKeys {
  if (k === null) return { keys: [] };
  if (typeof k === 'string') {
    const p = keyProblem(k);
    return p ? { error: keyProblemText(p), retryable: false } : { keys: [k] };
  }
  if (Array.isArray(k)) {
    const keys = [...new Set(k)];
    for (const key of keys) {
      const p = keyProblem(key);
      if (p) return { error: keyProblemText(p), retryable: false };
    }
    return { keys };
  }
  return { error: `${k.error.code}: ${k.error.message}`, retryable: k.error.code !== 'KEY_TOO_LONG' };
}
