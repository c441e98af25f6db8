import { MAX_HELD_FAILURE_CHARS } from './lane-failure-schema';
import { LaneFailure } from './lane-runs.port';

/** What held_failure stores for a failure: its details, or null when absent or past the cap (never a cut JSON text). */
export function heldFailure(r: LaneFailure): string | null {
  return r.failure !== undefined && r.failure.length <= MAX_HELD_FAILURE_CHARS ? r.failure : null;
}
