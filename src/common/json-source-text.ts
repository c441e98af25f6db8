/**
 * The text a client sent for the payloads of an append, kept as sent. JSON.parse would change it:
 * numbers become doubles (`79.90` → 79.9, `9007199254740993` → …992, `1e400` → Infinity) and
 * integer-like keys move to the front of an object (`{"b":1,"2":2}` → `{"2":2,"b":1}`). So the
 * parsed body is used only to validate; what is stored is the payload's own source text, with the
 * whitespace between tokens removed.
 *
 * Most bodies need none of this: when JSON.stringify of the parsed payload gives its source text
 * anyway (see stringifyGivesSourceText), that is used. Otherwise the texts are found by one scan of
 * the body (which JSON.parse has already accepted, so the scan need not validate) and attached to the
 * parsed objects they belong to.
 *
 * A key repeated in one object (RFC 8259 advises against it) is kept as sent on the scanning path,
 * and read as JSON.parse reads it (the last value, at the first key's place) on the fast path.
 */

const texts = new WeakMap<object, string>();

/** The JSON text to store for a payload of an append body: the client's own, compacted. */
export function payloadText(value: unknown): string {
  return sourceTextOf(value) ?? JSON.stringify(value);
}

/**
 * The compact source text of a payload object of an append body, when the body parser recorded one
 * (undefined when JSON.stringify of the value gives that text anyway).
 */
export function sourceTextOf(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? texts.get(value) : undefined;
}

/**
 * Records the source texts of `data` and `metadata` of the root object and of `data` in each element
 * of its `events` array (the two append bodies). `parsed` is JSON.parse(text). One pass over the text.
 */
export function recordPayloadTexts(text: string, parsed: unknown): void {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return;
  if (stringifyGivesSourceText(text)) return;
  const body = parsed as Record<string, unknown>;
  const scan = new JsonScanner(text);
  // Spans of the last occurrence of each key (JSON.parse keeps the last too).
  let data: Span | undefined;
  let metadata: Span | undefined;
  let elementData: (Span | undefined)[] = [];
  scan.members(scan.skipWhitespace(0), (key, start) => {
    if (key === 'data' || key === 'metadata') {
      const span: Span = [start, scan.skipValue(start)];
      if (key === 'data') data = span;
      else metadata = span;
      return span[1];
    }
    if (key !== 'events' || text.charCodeAt(start) !== 0x5b /* [ */) return undefined;
    elementData = [];
    return scan.elements(start, (index, elementStart) => {
      if (text.charCodeAt(elementStart) !== 0x7b /* { */) return undefined;
      return scan.members(elementStart, (k, valueStart) => {
        if (k !== 'data') return undefined;
        const span: Span = [valueStart, scan.skipValue(valueStart)];
        elementData[index] = span;
        return span[1];
      });
    });
  });
  attach(body.data, text, data);
  attach(body.metadata, text, metadata);
  if (Array.isArray(body.events)) {
    body.events.forEach((item, i) => {
      if (item !== null && typeof item === 'object') attach((item as Record<string, unknown>).data, text, elementData[i]);
    });
  }
}

type Span = [start: number, end: number];

/**
 * The fast path, for most bodies: JSON.stringify of the parsed payloads already is their compacted
 * source text when no string has an escape (JSON.stringify writes some differently: `\u00e9` → `é`),
 * no key is integer-like (JavaScript objects put those first) and every number survives a double.
 * Two cheap native searches and one regex scan: half the cost of the JSON.parse before it.
 */
function stringifyGivesSourceText(text: string): boolean {
  return text.indexOf('\\') === -1 && !INTEGER_KEY.test(text) && numbersSurviveDoubles(text);
}

/** An integer-like key (array-index-like: V8 orders those first). Without escapes, no string value can look like one. */
const INTEGER_KEY = /"(?:0|[1-9]\d*)"\s*:/;

/**
 * What looks like a number at the start or after `:`, `,` or `[`: every number of a JSON text, and
 * rarely something inside a string ("a,1.0") — a false alarm only costs the slow path.
 */
const NUMBER_CANDIDATES = /(?:^|[:,[])\s*(-?\d[\d.eE+-]*)/g;

function numbersSurviveDoubles(text: string): boolean {
  NUMBER_CANDIDATES.lastIndex = 0;
  for (let m = NUMBER_CANDIDATES.exec(text); m !== null; m = NUMBER_CANDIDATES.exec(text)) {
    if (!survivesDouble(m[1])) return false;
  }
  return true;
}

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

function attach(value: unknown, text: string, span: Span | undefined): void {
  if (span && value !== null && typeof value === 'object') texts.set(value, compact(text.slice(span[0], span[1])));
}

const WHITESPACE = /[ \t\n\r]/;

/** The JSON text without whitespace between tokens (whitespace inside strings stays). */
export function compact(json: string): string {
  if (!WHITESPACE.test(json)) return json; // machine-written JSON usually has none
  let out = '';
  let from = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(json, i) - 1;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      out += json.slice(from, i);
      from = i + 1;
    }
  }
  return out + json.slice(from);
}

/** Index just past the string starting at `start` (a `"`). */
function stringEnd(json: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = json.indexOf('"', i);
    // A quote preceded by an odd number of backslashes is escaped.
    let backslashes = 0;
    for (let k = q - 1; json.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/**
 * Walks JSON text that is known to be valid, without recursion. A visitor that wants a value
 * consumes it and returns where it ends; one that returns undefined has it skipped.
 */
class JsonScanner {
  /** The next quote or bracket: native search instead of a loop over every character. */
  private readonly structural = /["{}[\]]/g;

  constructor(private readonly json: string) {}

  skipWhitespace(i: number): number {
    const s = this.json;
    for (let c = s.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = s.charCodeAt(++i));
    return i;
  }

  /** Index just past the value starting at `i`. */
  skipValue(i: number): number {
    const s = this.json;
    const c = s.charCodeAt(i);
    if (c === 0x22) return stringEnd(s, i);
    if (c !== 0x7b && c !== 0x5b) {
      // number, true, false, null: up to the next delimiter
      let j = i + 1;
      for (
        let d = s.charCodeAt(j);
        j < s.length && d !== 0x2c && d !== 0x7d && d !== 0x5d && d !== 0x20 && d !== 0x09 && d !== 0x0a && d !== 0x0d;
        d = s.charCodeAt(++j)
      );
      return j;
    }
    let depth = 0;
    const re = this.structural;
    re.lastIndex = i;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      const d = s.charCodeAt(m.index);
      if (d === 0x22) re.lastIndex = stringEnd(s, m.index);
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (--depth === 0) return m.index + 1;
    }
    return s.length;
  }

  /** Visits the members of the object at `i`; returns the index just past it. */
  members(i: number, visit: (key: string, valueStart: number) => number | undefined): number {
    const s = this.json;
    i = this.skipWhitespace(i + 1);
    while (s.charCodeAt(i) === 0x22) {
      const keyEnd = stringEnd(s, i);
      const raw = s.slice(i + 1, keyEnd - 1);
      const key = raw.includes('\\') ? (JSON.parse(s.slice(i, keyEnd)) as string) : raw;
      const valueStart = this.skipWhitespace(this.skipWhitespace(keyEnd) + 1);
      i = this.skipWhitespace(visit(key, valueStart) ?? this.skipValue(valueStart));
      if (s.charCodeAt(i) === 0x2c) i = this.skipWhitespace(i + 1);
    }
    return i + 1; // past the }
  }

  /** Visits the elements of the array at `i`; returns the index just past it. */
  elements(i: number, visit: (index: number, start: number) => number | undefined): number {
    const s = this.json;
    i = this.skipWhitespace(i + 1);
    for (let index = 0; i < s.length && s.charCodeAt(i) !== 0x5d; index++) {
      i = this.skipWhitespace(visit(index, i) ?? this.skipValue(i));
      if (s.charCodeAt(i) === 0x2c) i = this.skipWhitespace(i + 1);
    }
    return i + 1; // past the ]
  }
}
