import { validationFailed } from './domain-error';

/**
 * A non-negative integer query parameter (digits only: no "1e3", no sign, no spaces), in [min, max].
 * Every cursor, sequence, position and version goes through here, so none is ever past
 * Number.MAX_SAFE_INTEGER: a larger one would not survive as a number (1e26 would be echoed as
 * `1e+26`) and could never be reached anyway.
 */
export function parseIntParam(name: string, raw: string | undefined, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw validationFailed(name, 'must be a non-negative integer');
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw validationFailed(name, `must be between ${min} and ${max}`);
  return n;
}
