// The last conversion, remembered: the events of one append (and of one group commit) share a
// timestamp, and the reducer path formats each of them again for the host.
let lastMs = NaN;
let lastText = '';

/** ISO 8601, UTC, millisecond precision: the contract's one timestamp format. */
export const isoTime = (ms: number): string => {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString(); // throws RangeError on an invalid time, as before (nothing remembered then)
    lastMs = ms;
  }
  return lastText;
};
