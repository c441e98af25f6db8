/** Dry runs of candidate reducers and projections over a tenant's history (README "Dry runs"). */
export interface DryRunSettings {
  /** The most events one run reads (DRY_RUN_MAX_EVENTS); a request may ask for fewer. */
  maxEvents: number;
  /** The most keys (aggregates) whose states one run keeps in memory (DRY_RUN_MAX_KEYS). */
  maxKeys: number;
  /** The most bytes of state text one run keeps in memory, per fold (DRY_RUN_MAX_STATE_BYTES). */
  maxStateBytes: number;
  /** The longest a run reads and folds (DRY_RUN_MAX_MS); the compile's own deadline is apart. */
  maxDurationMs: number;
  /** How long a finished run's report is kept, in the memory of the instance that ran it (DRY_RUN_KEEP_MS). */
  keepMs: number;
}

/** Parsed with the config's own integer reader (bad values reported with every other problem). */
export function dryRunSettings(int: (name: string, def: number, min: number, max: number) => number): DryRunSettings {
  return {
    maxEvents: int('DRY_RUN_MAX_EVENTS', 100_000, 1, 100_000_000),
    maxKeys: int('DRY_RUN_MAX_KEYS', 10_000, 1, 10_000_000),
    maxStateBytes: int('DRY_RUN_MAX_STATE_BYTES', 64 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    maxDurationMs: int('DRY_RUN_MAX_MS', 60_000, 100, 3_600_000),
    keepMs: int('DRY_RUN_KEEP_MS', 3_600_000, 1_000, 7 * 86_400_000),
  };
}
