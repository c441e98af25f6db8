import { Logger } from '@nestjs/common';
import { SerialRunner } from '../common/serial-runner';
import { toWireEvent } from '../reducers/wire-event';
import { HostCallError } from '../runtime/host-process';
import { RuntimePool } from '../runtime/runtime-pool';
import { EventLog, StoredEvent } from '../store/event-log.port';
import { InboxItem, ProjectionRepository, ProjectionVersion } from '../store/projection-repository.port';
import { DEFAULT_MAX_KEY_LENGTH, ResolvedKey } from '../runtime/runtime-protocol';
import { LaneScheduler } from './lane-scheduler.port';

/**
 * Where events go whose ResolveKey kept throwing (or gave a key the store cannot hold): a lane of
 * its own, held, for an operator to see. A reserved key: a projection's own key of this name is
 * treated as unresolvable too.
 */
export const UNRESOLVED_KEY = '!unresolved';

/** The host refuses longer keys itself (KEY_TOO_LONG) before writing them; checked here again for any key. */
const MAX_KEY_LENGTH = DEFAULT_MAX_KEY_LENGTH;
/** Keys go into URLs and every store's text columns: no control characters (PostgreSQL refuses NUL). */
const BAD_KEY = /[\u0000-\u001f\u007f]/;

/** Why a key from ResolveKey cannot be a lane, or null. */
export function keyProblem(key: string): string | null {
  if (key === UNRESOLVED_KEY) return `the key '${UNRESOLVED_KEY}' is reserved`;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return `a state key must be 1–${MAX_KEY_LENGTH} characters`;
  if (BAD_KEY.test(key)) return 'a state key must not contain control characters';
  return null;
}

/** A ResolveKey that threw may be retried; a key refused for its length will be refused again. */
function mayPassOnRetry(k: ResolvedKey): boolean {
  return k !== null && typeof k === 'object' && k.error.code !== 'KEY_TOO_LONG';
}

const ROUTE_BATCH = 500;
const RESOLVE_ATTEMPTS = 3;

/**
 * Reads the tenant's log in global order for one projection version, asks the projection for
 * each event's key (in batches), and hands events to their lanes' inboxes in the store, with the
 * routed position in the same transaction; then wakes those lanes. One router per version per
 * process; routing twice is harmless (inbox rows are keyed by position).
 */
export class VersionRouter {
  private readonly logger = new Logger('VersionRouter');
  private readonly runner = new SerialRunner(
    () => this.loop(),
    (e) => this.logger.error(`routing ${this.version.versionId} failed: ${e instanceof Error ? e.stack : e}`),
  );

  constructor(
    private readonly version: ProjectionVersion,
    private readonly log: EventLog,
    private readonly repo: ProjectionRepository,
    private readonly runtime: Pick<RuntimePool, 'resolveKeys'>,
    private readonly scheduler: LaneScheduler,
    private readonly onRouted: () => void,
    /** The version is gone from the store (retired or deleted, maybe by another instance). */
    private readonly onGone: () => void = () => undefined,
  ) {}

  get versionId(): string {
    return this.version.versionId;
  }

  get tenantId(): string {
    return this.version.tenantId;
  }

  wake(): void {
    this.runner.wake();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  private async loop(): Promise<void> {
    const { tenantId, versionId } = this.version;
    const current = await this.repo.getVersion(tenantId, versionId);
    if (!current) {
      // Routing it from position 0 would fill the inbox of a version no one runs.
      this.onGone();
      return;
    }
    let routed = current.routedPosition;
    while (!this.runner.stopped) {
      const events = await this.log.readAll(tenantId, routed, ROUTE_BATCH);
      if (events.length === 0) break;
      const items = await this.resolve(events);
      const last = events[events.length - 1].position;
      await this.repo.route(tenantId, versionId, items, last);
      routed = last;
      // The unresolved lane is held (route made its row), never woken: an operator's retry wakes it.
      const unresolved = items.find((i) => i.key === UNRESOLVED_KEY);
      if (unresolved) {
        await this.repo.failed(tenantId, versionId, UNRESOLVED_KEY, { position: unresolved.position, error: this.lastResolveError, hold: true });
      }
      const keys = [...new Set(items.map((i) => i.key))].filter((k) => k !== UNRESOLVED_KEY);
      await this.scheduler.wakeMany(keys.map((key) => ({ tenantId, versionId, key })));
      // A short batch was the log's end when read: an event committed since then has woken this
      // runner again (SerialRunner runs once more), so reading once more now would find nothing.
      if (events.length < ROUTE_BATCH) break;
      this.onRouted();
    }
    this.onRouted();
  }

  private lastResolveError = '';

  private async resolve(events: StoredEvent[]): Promise<InboxItem[]> {
    const { tenantId, versionId, className } = this.version;
    const wire = events.map(toWireEvent);
    for (let attempt = 1; ; attempt++) {
      let keys;
      try {
        keys = await this.runtime.resolveKeys(tenantId, versionId, className, wire);
      } catch (e) {
        if (e instanceof HostCallError && e.failure !== 'UNAVAILABLE' && attempt >= RESOLVE_ATTEMPTS) {
          this.lastResolveError = `${e.failure}: ${e.message}`;
          return events.map((ev) => ({ key: UNRESOLVED_KEY, position: ev.position }));
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
        continue;
      }
      const failed = keys.some(mayPassOnRetry);
      if (failed && attempt < RESOLVE_ATTEMPTS) {
        await new Promise((r) => setTimeout(r, 200 * attempt));
        continue;
      }
      const items: InboxItem[] = [];
      keys.forEach((k, i) => {
        if (k === null) return;
        const problem = typeof k === 'string' ? keyProblem(k) : `${k.error.code}: ${k.error.message}`;
        if (problem === null) {
          items.push({ key: k as string, position: events[i].position });
          return;
        }
        this.lastResolveError = typeof k === 'string' ? `INVALID_KEY: ${problem}` : problem;
        items.push({ key: UNRESOLVED_KEY, position: events[i].position });
      });
      return items;
    }
  }
}
