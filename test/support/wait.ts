/** Waiting in tests: on a condition (until, settle), or — said why — for time to pass (elapse). */

/** How often until and settle look again. */
const POLL_MS = 25;

/** Waits until `ok(fn())`, looking every 25 ms; fails after `ms` with what was last seen. */
export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 60_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms: ${JSON.stringify(v)?.slice(0, 500)}`);
    await elapse(POLL_MS, 'poll interval');
  }
}

/**
 * Waits until `ok` or `deadline` (epoch ms) and returns the last value either way, so that the
 * assertion that follows shows what arrived instead of a timeout.
 */
export async function settle<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, deadline: number): Promise<T> {
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await elapse(POLL_MS, 'poll interval');
  }
}

/**
 * Lets real time pass on purpose, and says why: proving that nothing happens within a window, waiting
 * out a clock-based limit (a rate-limit refill, a backoff, a lease or TTL), or one poll interval of a
 * wait on a condition. A test that waits for something to happen uses `until(...)` above or
 * an event the code exposes instead; lint forbids a bare `setTimeout` sleep in tests outside this file.
 */
export function elapse(ms: number, why: string): Promise<void> {
  void why; // for the reader of the test: the pause is part of what it proves
  return new Promise((resolve) => setTimeout(resolve, ms));
}
