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

/**
 * What looks like a number at the start or after `:`, `,` or `[`: every number of a JSON text, and rarely something
 * inside a string ("a,1.0"). A cheap first look (half the cost of TOKENS, whose strings must be
 * matched whole); a false alarm only sends the text to the exact pass, which tells strings apart.
 */
const NUMBER_CANDIDATES = /(?:^|[:,[])\s*(-?\d[\d.eE+-]*)/g;

/** True when a double writes this number token back as the same characters. */
function survivesDouble(token: string): boolean {
  // Most numbers are short plain integers (`42`, `-7`), which always survive: no conversion needed.
  const n = token.length;
  if (n < 16) {
    let i = token.charCodeAt(0) === 0x2d ? 1 : 0;
    const first = token.charCodeAt(i);
    if (first > 0x30 && first <= 0x39) {
      for (i++; i < n; i++) {
        const c = token.charCodeAt(i);
        if (c < 0x30 || c > 0x39) break;
      }
      if (i === n) return true;
    } else if (n === 1 && first === 0x30) return true;
  }
  return String(Number(token)) === token;
}

/** True when every number in `text` (valid JSON) surely survives JSON.parse → JSON.stringify unchanged. */
export function numbersSurviveDoubles(text: string): boolean {
  NUMBER_CANDIDATES.lastIndex = 0;
  for (let m = NUMBER_CANDIDATES.exec(text); m !== null; m = NUMBER_CANDIDATES.exec(text)) {
    if (!survivesDouble(m[1])) return false;
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
  let changed = false;
  const marked = text.replace(TOKENS, (t) => {
    if (t.charCodeAt(0) === 0x22 || survivesDouble(t)) return t;
    changed = true;
    return `"${MARKER_IN_JSON}${t}"`;
  });
  if (!changed) return parsed; // the candidate was inside a string
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
