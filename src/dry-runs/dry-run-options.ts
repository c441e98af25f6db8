import { validationFailed } from '../common/domain-error';

/** A dry run's limits (DRY_RUN_* variables; src/config/dry-run-settings.ts). */
export interface DryRunLimits {
  maxEvents: number;
  maxKeys: number;
  maxStateBytes: number;
  maxDurationMs: number;
}

/** What the caller asked for (the multipart form's text fields), checked. */
export interface DryRunOptions {
  /** The most events read (at most the configured maxEvents). */
  maxEvents: number;
  /** The first position read (inclusive; default 1). */
  fromPosition: number;
  /** The last position read (inclusive; default: the tenant's head when the run starts). */
  toPosition: number | null;
  /** Only these keys (aggregate ids for a reducer) are folded and compared. */
  keys: string[] | null;
  /** Only the first this many keys met in the log are folded and compared. */
  sampleKeys: number | null;
  /** The candidate's class (default: the one implementation of the kind that fits). */
  className: string | null;
}

function int(fields: Record<string, string>, name: string, min: number, max: number): number | null {
  const raw = fields[name];
  if (raw === undefined || raw.trim() === '') return null;
  if (!/^\d+$/.test(raw.trim())) throw validationFailed(name, 'must be a whole number');
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < min || n > max) throw validationFailed(name, `must be from ${min} to ${max}`);
  return n;
}

/** `keys`: a JSON array of strings, or a comma-separated list. */
function keyList(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  let keys: unknown;
  if (raw.trim().startsWith('[')) {
    try {
      keys = JSON.parse(raw);
    } catch {
      throw validationFailed('keys', 'must be a JSON array of strings or a comma-separated list');
    }
  } else keys = raw.split(',').map((k) => k.trim());
  if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === ''))
    throw validationFailed('keys', 'must be a JSON array of non-empty strings or a comma-separated list');
  if (keys.length > 1_000) throw validationFailed('keys', 'at most 1000 keys');
  return keys as string[];
}

export function parseDryRunOptions(fields: Record<string, string>, limits: DryRunLimits): DryRunOptions {
  const fromPosition = int(fields, 'fromPosition', 1, Number.MAX_SAFE_INTEGER) ?? 1;
  const toPosition = int(fields, 'toPosition', 1, Number.MAX_SAFE_INTEGER);
  if (toPosition !== null && toPosition < fromPosition) throw validationFailed('toPosition', 'must not be below fromPosition');
  const keys = keyList(fields.keys);
  const sampleKeys = int(fields, 'sampleKeys', 1, limits.maxKeys);
  if (keys && sampleKeys !== null) throw validationFailed('sampleKeys', 'give keys or sampleKeys, not both');
  const className = fields.className?.trim() || null;
  return {
    maxEvents: int(fields, 'maxEvents', 1, limits.maxEvents) ?? limits.maxEvents,
    fromPosition,
    toPosition,
    keys,
    sampleKeys,
    className,
  };
}

/** Which keys a run folds: the ones asked for, the first `sampleKeys` met, or all. */
export class KeySample {
  private readonly admitted = new Set<string>();

  constructor(private readonly options: Pick<DryRunOptions, 'keys' | 'sampleKeys'>) {
    for (const k of options.keys ?? []) this.admitted.add(k);
  }

  /** Whether every key is folded: then a live key the candidate never made is one it would not have. */
  get all(): boolean {
    return this.options.keys === null && this.options.sampleKeys === null;
  }

  admits(key: string): boolean {
    if (this.options.keys) return this.admitted.has(key);
    if (this.options.sampleKeys === null || this.admitted.has(key)) return true;
    if (this.admitted.size >= this.options.sampleKeys) return false;
    this.admitted.add(key);
    return true;
  }
}
