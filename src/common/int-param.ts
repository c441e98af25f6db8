import { validationFailed } from './domain-error';

/** A non-negative integer query parameter (digits only: no "1e3", no sign, no spaces), in [min, max]. */
export function parseIntParam(name: string, raw: string | undefined, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined || raw === '') return def;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw validationFailed(name, 'must be a non-negative integer');
  if (n < min || n > max) throw validationFailed(name, `must be between ${min} and ${max}`);
  return n;
}
