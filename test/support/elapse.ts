/**
 * Lets real time pass on purpose, and says why: proving that nothing happens within a window, waiting
 * out a clock-based limit (a rate-limit refill, a backoff, a lease or TTL), or one poll interval of a
 * wait on a condition. A test that waits for something to happen uses `until(...)` (tenant-code.ts) or
 * an event the code exposes instead; lint forbids a bare `setTimeout` sleep in tests outside this file.
 */
export function elapse(ms: number, why: string): Promise<void> {
  void why; // for the reader of the test: the pause is part of what it proves
  return new Promise((resolve) => setTimeout(resolve, ms));
}
