import { randomBytes } from 'node:crypto';
import { RawJson } from './raw-json';

/**
 * Parsing JSON without changing a number. JSON.parse turns every number into a double: `79.90`
 * becomes 79.9, `9007199254740993` becomes …992. Most bodies hold only numbers a double writes back
 * with the same digits (`42`, `0.5`), and for them JSON.parse's result is exact. Only when a number
 * would change is the text parsed again, with that number kept as a RawJson of its source digits.
 */

/**
 * String tokens (skipped: digits inside strings are not numbers) or number tokens. On text
 * JSON.parse has accepted, a number token ends exactly where this pattern stops.
 */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d[\d.eE+-]*/g;

/** True when a double writes this number token back as the same characters. */
function survivesDouble(token: string): boolean {
  return String(Number(token)) === token;
}

/** True when every number in `text` (valid JSON) survives JSON.parse → JSON.stringify unchanged. */
export function numbersSurviveDoubles(text: string): boolean {
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(text); m !== null; m = TOKENS.exec(text)) {
    const t = m[0];
    if (t.charCodeAt(0) !== 0x22 && !survivesDouble(t)) return false;
  }
  return true;
}

// A number that would change is rewritten as a string holding this marker and its digits, which
// JSON.parse then keeps exactly; the walk below turns such strings into RawJson. The marker holds a
// random nonce and U+0000 (which a client's string could only hold escaped), so no string a client
// sent can be taken for a number.
const MARKER = `\u0000${randomBytes(12).toString('hex')}:`;
const MARKER_IN_JSON = `\\u0000${MARKER.slice(1)}`;

/**
 * `parsed` (JSON.parse of `text`) when its numbers are exact; otherwise the same value with every
 * number a double would change held as RawJson. Same keys, same order, same duplicate-key rule
 * (the last wins) as JSON.parse, at any depth: the walk uses no recursion.
 */
export function withExactNumbers(text: string, parsed: unknown): unknown {
  if (numbersSurviveDoubles(text)) return parsed;
  const marked = text.replace(TOKENS, (t) => (t.charCodeAt(0) === 0x22 || survivesDouble(t) ? t : `"${MARKER_IN_JSON}${t}"`));
  const root = JSON.parse(marked) as unknown;
  if (isMarked(root)) return new RawJson(root.slice(MARKER.length));
  const stack: object[] = root !== null && typeof root === 'object' ? [root] : [];
  while (stack.length) {
    const node = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const v = node[key];
      // defineProperty: a key "__proto__" (an own property after JSON.parse) must not set the prototype.
      if (isMarked(v)) Object.defineProperty(node, key, { value: new RawJson(v.slice(MARKER.length)), writable: true, enumerable: true, configurable: true });
      else if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return root;
}

function isMarked(v: unknown): v is string {
  return typeof v === 'string' && v.startsWith(MARKER);
}

/** JSON.parse, exact: numbers a double would change come back as RawJson. */
export function parseExactly(text: string): unknown {
  return withExactNumbers(text, JSON.parse(text));
}
