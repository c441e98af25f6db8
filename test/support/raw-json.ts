import { LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON kept as text, for tests about exact numbers. `JSON.parse` turns `79.90` into `79.9` and
 * `9007199254740993` into `9007199254740992`, the very loss these tests look for, so responses are
 * never parsed with it: assertions compare the exact source text of a value (`rawAt`) or values
 * parsed with lossless-json, whose numbers keep their text (`exactParse`, compared with `num(...)`).
 */

/** A JSON number written exactly as `text` (in bodies built with `jsonText`, and in expected values). */
export const num = (text: string): LosslessNumber => new LosslessNumber(text);

/** Compact JSON text; numbers made with `num` are written exactly as given. */
export function jsonText(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new Error('not representable as JSON');
  return text;
}

/** Parsed without losing digits: numbers become LosslessNumber (`toEqual(num('79.90'))` matches). */
export function exactParse(text: string): any {
  return parse(text);
}

const WS = new Set([' ', '\t', '\n', '\r']);

function skipWs(t: string, i: number): number {
  while (i < t.length && WS.has(t[i])) i++;
  return i;
}

function endOfString(t: string, i: number): number {
  for (i++; i < t.length; i++) {
    if (t[i] === '\\') i++;
    else if (t[i] === '"') return i + 1;
  }
  throw new Error('unterminated string');
}

/** Index just past the value starting at `i` (no recursion: any depth). */
function endOfValue(t: string, i: number): number {
  const c = t[i];
  if (c === '"') return endOfString(t, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (; i < t.length; i++) {
      const d = t[i];
      if (d === '"') i = endOfString(t, i) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        if (--depth === 0) return i + 1;
      }
    }
    throw new Error('unterminated container');
  }
  let j = i;
  while (j < t.length && !WS.has(t[j]) && t[j] !== ',' && t[j] !== '}' && t[j] !== ']') j++;
  if (j === i) throw new Error(`no value at ${i}`);
  return j;
}

/** Start index of the member `key` (object) or element `index` (array) of the container at `i`, or -1. */
function childStart(t: string, i: number, seg: string | number): number {
  const open = t[i];
  if ((typeof seg === 'string' && open !== '{') || (typeof seg === 'number' && open !== '[')) return -1;
  i = skipWs(t, i + 1);
  if (t[i] === '}' || t[i] === ']') return -1;
  for (let n = 0; ; n++) {
    let match = n === seg;
    if (open === '{') {
      const keyEnd = endOfString(t, i);
      match = JSON.parse(t.slice(i, keyEnd)) === seg;
      i = skipWs(t, keyEnd);
      if (t[i] !== ':') throw new Error(`expected ':' at ${i}`);
      i = skipWs(t, i + 1);
    }
    if (match) return i;
    i = skipWs(t, endOfValue(t, i));
    if (t[i] !== ',') return -1;
    i = skipWs(t, i + 1);
  }
}

/**
 * The exact source text of the value at `path` in the JSON `text`, byte for byte as received:
 * `rawAt('{"state":{"balance":100.50}}', ['state'])` is `{"balance":100.50}`.
 */
export function rawAt(text: string, path: (string | number)[]): string {
  let i = skipWs(text, 0);
  for (const seg of path) {
    const next = childStart(text, i, seg);
    if (next < 0) throw new Error(`no ${JSON.stringify(path)} in ${text.length > 600 ? text.slice(0, 600) + '…' : text}`);
    i = next;
  }
  return text.slice(i, endOfValue(text, i));
}

/** Whether `path` exists in `text`. */
export function hasRaw(text: string, path: (string | number)[]): boolean {
  try {
    rawAt(text, path);
    return true;
  } catch {
    return false;
  }
}

export interface RawResult {
  status: number;
  /** The response body exactly as received. */
  text: string;
}

/** One HTTP request whose body is sent as the given text and whose response is kept as text. */
export async function rawRequest(url: string, method: string, body?: string, headers: Record<string, string> = {}): Promise<RawResult> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, text: await res.text() };
}

/** A tenant's client that writes bodies as exact text and keeps responses as text. */
export interface RawClient {
  url: string;
  key: string;
  post(path: string, body: string): Promise<RawResult>;
  put(path: string, body: string): Promise<RawResult>;
  get(path: string): Promise<RawResult>;
}

export function rawClient(url: string, key: string): RawClient {
  const h = { 'x-api-key': key };
  return {
    url,
    key,
    post: (p, body) => rawRequest(`${url}${p}`, 'POST', body, h),
    put: (p, body) => rawRequest(`${url}${p}`, 'PUT', body, h),
    get: (p) => rawRequest(`${url}${p}`, 'GET', undefined, h),
  };
}

/** The exact `state` of a response, or what came instead (so a failed fold shows up in a diff, not as a crash). */
export function stateOf(res: RawResult): string {
  if (res.status < 300 && hasRaw(res.text, ['state'])) return rawAt(res.text, ['state']);
  const why = hasRaw(res.text, ['stateError']) ? `stateError ${rawAt(res.text, ['stateError'])}` : res.text.slice(0, 400);
  return `<no state: ${res.status} ${why}>`;
}

/** Fails with the response in the message unless `status` is as expected. */
export function expectStatus(res: RawResult, status: number, what = ''): RawResult {
  if (res.status !== status) throw new Error(`${what ? what + ': ' : ''}expected ${status}, got ${res.status}: ${res.text.slice(0, 800)}`);
  return res;
}
