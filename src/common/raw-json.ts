import { randomBytes } from 'node:crypto';

/**
 * JSON text that is written out exactly as it is: a stored event's `data`, a state the C# host
 * wrote, or one number whose digits a JavaScript double would change (`79.90`, `9007199254740993`).
 * The service never turns such text into JavaScript values and back; it splices it into what it
 * writes, with `stringifyJson`.
 *
 * `JSON.rawJSON` would do this natively, but Node 20's V8 does not have it.
 */
export class RawJson {
  constructor(readonly text: string) {}

  /**
   * Called by JSON.stringify: inside `stringifyJson`, a placeholder that is replaced by the text
   * afterwards. Anywhere else this would silently lose the exactness this class exists for, so it throws.
   */
  toJSON(): string {
    if (collected === null) throw new Error('RawJson must be written with stringifyJson, not JSON.stringify');
    collected.push(this.text);
    return PLACEHOLDER_PREFIX + (collected.length - 1);
  }
}

// JSON.stringify writes U+0000 as the six characters \u0000, which no JSON text from outside can
// hold next to this process's random nonce by accident: the placeholders cannot be forged.
const NONCE = randomBytes(12).toString('hex');
const PLACEHOLDER_PREFIX = `\u0000${NONCE}:`;
const PLACEHOLDER = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

let collected: string[] | null = null;

/**
 * JSON.stringify, with every RawJson written as its text. Values without RawJson cost one
 * JSON.stringify and nothing else (the native fast path).
 */
export function stringifyJson(value: unknown): string {
  const outer = collected;
  const raws: string[] = [];
  collected = raws;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } finally {
    collected = outer;
  }
  if (text === undefined) throw new TypeError('value is not representable as JSON');
  if (raws.length === 0) return text;
  let replaced = 0;
  const out = text.replace(PLACEHOLDER, (_m, i: string) => {
    replaced++;
    return raws[Number(i)];
  });
  if (replaced !== raws.length) throw new Error('a RawJson placeholder was lost or forged');
  return out;
}

/** Stored JSON text (or null) as a value that `stringifyJson` (and the reply serializer) writes verbatim. */
export function rawJsonOrNull(text: string | null): RawJson | null {
  return text === null ? null : new RawJson(text);
}
