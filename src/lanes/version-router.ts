import { Logger } from '@nestjs/common';
import { SerialRunner } from '../common/serial-runner';
import { toWireEvent } from '../reducers/wire-event';
import { HostCallError } from '../runtime/host-process';
import { RuntimePool } from '../runtime/runtime-pool';
import { EventLog, StoredEvent } from '../store/event-log.port';
import { InboxItem, ProjectionRepository, ProjectionVersion } from '../store/projection-repository.port';
import { ResolvedKey } from '../runtime/runtime-protocol';
import { LaneKeyCap } from './lane-key-cap';
import { LaneScheduler } from './lane-scheduler.port';
import { keyProblem, keyProblemText, UNRESOLVED_KEY } from './state-key-rule';

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
    /** The tenant's keysPerProjection limit: new keys past it are held in `!unresolved` (KEY_LIMIT). */
    private readonly keyCap?: LaneKeyCap,
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
    // Where to go on from is the store's routed position, never this object's: a router of a
    // dropped version finds no row and stops (it used to route the whole log again from 0).
    const current = await this.repo.getVersion(tenantId, versionId);
    if (!current) {
      this.onGone();
      return;
    }
    let routed = current.routedPosition;
    while (!this.runner.stopped) {
      const events = await this.log.readAll(tenantId, routed, ROUTE_BATCH);
      if (events.length === 0) break;
      let items = await this.resolve(events);
      // Stopped while ResolveKey ran (an untrack waits for this): write nothing more.
      if (this.runner.stopped) return;
      if (this.keyCap) {
        const capped = await this.keyCap.admit(tenantId, versionId, items);
        const firstUnresolved = items.find((i) => i.key === UNRESOLVED_KEY);
        if (capped.refused && (!firstUnresolved || capped.refused.position < firstUnresolved.position)) this.lastResolveError = capped.refused.error;
        items = capped.items;
      }
      const last = events[events.length - 1].position;
      if (!(await this.repo.route(tenantId, versionId, items, last))) {
        // Dropped meanwhile (the store refused the rows): stop for good.
        this.onGone();
        return;
      }
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
        if (this.runner.stopped) return []; // an untrack waits: no more attempts
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
        if (typeof k === 'string') {
          const refused = keyProblem(k);
          if (refused === null) {
            items.push({ key: k, position: events[i].position });
            return;
          }
          this.lastResolveError = keyProblemText(refused);
        } else {
          this.lastResolveError = `${k.error.code}: ${k.error.message}`;
        }
        items.push({ key: UNRESOLVED_KEY, position: events[i].position });
      });
      return items;
    }
  }
}
