/**
 * The failure details of a held lane (issue 27 item 6): JSON text of the tenant code's runtime failure —
 * exception type, the event, the tenant's own frames — written with held_error when the hold is set
 * (LaneRuns.failed), null when the failure had none (a deadline, a crash, a limit). Read only while
 * held_position is set, so release and skip need not clear it: the next hold writes both again.
 */
export const LANE_HELD_FAILURE_MIGRATION = `
  ALTER TABLE lanes ADD COLUMN held_failure TEXT;
  `;

/** The most of it kept: frames are capped by the host (32 frames of bounded names), this only guards the column. */
export const MAX_HELD_FAILURE_CHARS = 64 * 1024;
