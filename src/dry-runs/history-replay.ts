import { StoredEvent } from '../store/event-log.port';
import { DryRunLimits, DryRunOptions } from './dry-run-options';
import { Routed, StateFold, StopReason } from './state-fold';

/** Events read per page of the log. */
export const PAGE = 500;

/** What a running dry run shows in its status. */
export interface DryRunProgress {
  eventsRead: number;
  keysSeen: number;
  /** The last position read. */
  position: number;
}

export interface ReplayInput {
  /** Events after a position, ascending, at most `limit` (the log, or its events of one aggregate type). */
  read(afterPosition: number, limit: number): Promise<StoredEvent[]>;
  /** Each event of a page to the keys it updates (already filtered by the key sample). */
  route(events: StoredEvent[]): Promise<Routed[]>;
  /** The candidate's fold first; a baseline fold (the live reducer) gets the same events. */
  folds: StateFold[];
  options: DryRunOptions;
  limits: DryRunLimits;
  /** The tenant's head when the run started: nothing after it is read. */
  head: number;
  progress: DryRunProgress;
  now?: () => number;
}

export interface Replayed {
  fromPosition: number;
  toPosition: number;
  truncatedReason: StopReason | null;
}

/**
 * Reads the range page by page and folds each page before the next is read (one page's events in
 * memory at a time), until the range ends or a limit stops it: maxEvents read, maxDurationMs since
 * the start, or a fold's maxKeys/maxStateBytes.
 */
export async function replayHistory(input: ReplayInput): Promise<Replayed> {
  const { options, limits, progress } = input;
  const now = input.now ?? Date.now;
  const deadline = now() + limits.maxDurationMs;
  const toPosition = Math.min(options.toPosition ?? input.head, input.head);
  let after = options.fromPosition - 1;
  progress.position = after;
  const stop = (truncatedReason: StopReason): Replayed => ({ fromPosition: options.fromPosition, toPosition, truncatedReason });
  while (after < toPosition) {
    if (progress.eventsRead >= options.maxEvents) return stop('maxEvents');
    if (now() > deadline) return stop('maxDurationMs');
    const page = (await input.read(after, Math.min(PAGE, options.maxEvents - progress.eventsRead))).filter((e) => e.position <= toPosition);
    if (page.length === 0) break;
    const routed = await input.route(page);
    for (const fold of input.folds) {
      const reason = await fold.apply(routed);
      if (reason) return stop(reason);
    }
    progress.eventsRead += page.length;
    progress.position = page[page.length - 1].position;
    progress.keysSeen = input.folds[0].keysSeen;
    after = progress.position;
  }
  return { fromPosition: options.fromPosition, toPosition, truncatedReason: null };
}
