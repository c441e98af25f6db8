/** ISO 8601, UTC, millisecond precision: the contract's one timestamp format. */
export const isoTime = (ms: number): string => new Date(ms).toISOString();
