import { JsonPatchOp, jsonPatch } from './json-patch.util';

/** The most per-key diffs a report carries. */
export const DIFF_SAMPLE = 20;

/** The first event of one type the candidate failed on, and why (extra fields of the host's error passed through). */
export interface FailedEvent {
  eventId: string;
  position: number;
  aggregateId: string;
  /** The state key the event was applied under (projections; a reducer's is the aggregate id). */
  key: string | null;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export interface FailureGroup {
  eventType: string;
  count: number;
  first: FailedEvent;
}

/** Failures grouped by event type, each with its first failing event, in the order the types first failed. */
export class FailureBook {
  private readonly groups = new Map<string, FailureGroup>();

  record(eventType: string, event: FailedEvent): void {
    const g = this.groups.get(eventType);
    if (g) g.count++;
    else this.groups.set(eventType, { eventType, count: 1, first: event });
  }

  get size(): number {
    return this.groups.size;
  }

  list(): FailureGroup[] {
    return [...this.groups.values()];
  }
}

export type KeyChange = 'added' | 'removed' | 'changed';

export interface KeyDiff {
  key: string;
  change: KeyChange;
  /** RFC 6902 JSON Patch from the live state to the candidate's (added: one `add` of the whole state at ""; removed: a `remove` of ""). */
  patch: JsonPatchOp[];
}

export interface KeyCounts {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** Keys the candidate failed on (its lane would be held): not compared. */
  held: number;
}

export interface Comparison {
  keys: KeyCounts;
  diffs: KeyDiff[];
}

/**
 * Live keys the candidate does not have, counted as they are met; only the DIFF_SAMPLE smallest are
 * kept (for the diffs), so that a projection's every live key need not be held in memory.
 */
export class RemovedKeys {
  count = 0;
  private kept: string[] = [];

  add(key: string): void {
    this.count++;
    this.kept.push(key);
    if (this.kept.length > 4 * DIFF_SAMPLE) this.kept = smallest(this.kept);
  }

  get first(): string[] {
    return smallest(this.kept);
  }
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const smallest = (keys: string[]) => [...keys].sort(byKey).slice(0, DIFF_SAMPLE);

/**
 * The candidate's states against the live ones (both JSON text, key → state; `live` needs only the keys
 * the candidate has). A key is unchanged when the texts are equal (System.Text.Json writes the same text
 * for the same state); a changed key's diff is computed on the parsed values. `removed`: live keys the
 * candidate would not have, given only when the run saw the whole history for every key; on a partial
 * run (a position range, a sample of keys, truncated) only the keys the candidate touched are compared.
 * The diff sample is the first DIFF_SAMPLE differing keys in key order.
 */
export function compareStates(
  candidate: ReadonlyMap<string, string>,
  live: ReadonlyMap<string, string>,
  opts: { removed: RemovedKeys | null; held: ReadonlySet<string> },
): Comparison {
  const keys: KeyCounts = { added: 0, removed: opts.removed?.count ?? 0, changed: 0, unchanged: 0, held: opts.held.size };
  const differing: { key: string; change: KeyChange }[] = [];
  for (const [key, state] of candidate) {
    if (opts.held.has(key)) continue;
    const before = live.get(key);
    if (before === undefined) differing.push({ key, change: 'added' });
    else if (before === state) keys.unchanged++;
    else differing.push({ key, change: 'changed' });
  }
  for (const d of differing) keys[d.change]++;
  for (const key of opts.removed?.first ?? []) differing.push({ key, change: 'removed' });
  differing.sort((a, b) => byKey(a.key, b.key));
  const diffs = differing.slice(0, DIFF_SAMPLE).map(({ key, change }): KeyDiff => {
    if (change === 'added') return { key, change, patch: [{ op: 'add', path: '', value: JSON.parse(candidate.get(key)!) }] };
    if (change === 'removed') return { key, change, patch: [{ op: 'remove', path: '' }] };
    return { key, change, patch: jsonPatch(JSON.parse(live.get(key)!), JSON.parse(candidate.get(key)!)) };
  });
  return { keys, diffs };
}

/** The removed keys of a baseline held whole in memory (a reducer's current fold): its keys the candidate has not and did not fail on. */
export function removedFrom(baseline: ReadonlyMap<string, string>, candidate: ReadonlyMap<string, string>, held: ReadonlySet<string>) {
  const removed = new RemovedKeys();
  for (const key of baseline.keys()) if (!candidate.has(key) && !held.has(key)) removed.add(key);
  return removed;
}
