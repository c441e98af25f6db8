import { Logger } from '@nestjs/common';
import { groupBy } from '../common/group-by';
import { toWireEvent } from '../tenant-code/wire-event';
import { HostCallError } from '../tenant-code/host/host-process';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { ResolvedKey, WireEvent } from '../tenant-code/host/runtime-protocol';
import { runtimeFailure } from '../tenant-code/runtime-failure';
import { EventLog, StoredEvent } from '../store/event-log.port';
import { ProjectionCatalogRepository, ProjectionVersion } from '../store/projection-catalog.port';
import { InboxItem, VersionRoute } from '../store/lanes/lane-records';
import { Lanes } from '../store/lanes/lanes';
import { AppendTraces } from '../observability/tracing/append-traces';
import { endWith } from '../observability/tracing/tracing';
import { startRouteSpan } from '../observability/tracing/spans';
import { LaneKeyCap } from './lane-key-cap';
import { LaneScheduler } from './lane-scheduler.port';
import { eventKeys, UNRESOLVED_KEY } from './state-key-rule';

/** A ResolveKey that threw may be retried; a key refused for its length will be refused again. */
function mayPassOnRetry(k: ResolvedKey): boolean {
  const r = eventKeys(k);
  return 'error' in r && r.retryable;
}

/**
 * An event of several keys (IResolveKeys) of which one went to `!unresolved` (the key limit) goes
 * there whole, once: none of its keys' lanes gets it, so the operator's retry routes it to all of them.
 */
export function holdWhole(items: InboxItem[]): InboxItem[] {
  const held = new Set(items.filter((i) => i.key === UNRESOLVED_KEY).map((i) => i.position));
  if (held.size === 0) return items;
  const written = new Set<number>();
  return items.filter((i) => {
    if (!held.has(i.position)) return true;
    if (i.key !== UNRESOLVED_KEY || written.has(i.position)) return false;
    written.add(i.position); // the first `!unresolved` row of the position, no second
    return true;
  });
}

const ROUTE_BATCH = 500;
const RESOLVE_ATTEMPTS = 3;

/** What the router tells its engine. */
export interface TenantRouterEvents {
  /** Events went to lanes (a catching-up version may be done soon). */
  routed(): void;
  /** The version is gone from the store (retired or deleted, maybe by another instance). */
  gone(versionId: string): void;
}

/**
 * Reads one tenant's log in global order for all of its live projection versions, asks each
 * version's projection for each event's key (in batches), and hands the events to their lanes'
 * inboxes in the store with each version's routed position in the same transaction; then wakes
 * those lanes. One router per tenant per process; routing twice is harmless (inbox rows are keyed
 * by position).
 *
 * Versions that stand at the same position share one read of the log and one transaction: the
 * caught-up ones all stand at the head, so an append costs one read, one resolve round (a call per
 * version, which the executor sends several to a request) and one write, whatever the tenant's
 * number of projections. A version catching up (a deploy) reads its own batches, one per pass, so
 * the caught-up versions are routed between them rather than after its whole catch-up.
 */
export class TenantRouter {
  private readonly logger = new Logger('TenantRouter');
  /**
   * Passes run one at a time: a wake during a pass makes exactly one more pass afterwards (a wake is
   * never lost, passes never overlap). Written out here rather than a SerialRunner with a closure,
   * so that wake() calls loop() where one can click it.
   */
  private pass?: Promise<void>;
  private passAgain = false;
  private stopped = false;
  /** The versions routed here; each one's position is the store's, read by every pass. */
  private readonly versions = new Map<string, ProjectionVersion>();
  /** Per version: why its last events went to `!unresolved` (the held lane's error). */
  private readonly resolveErrors = new Map<string, string>();
  /**
   * The first ResolveKey exception of a pass, per version (its event's position and RuntimeFailure as JSON): kept with
   * the `!unresolved` hold when that hold is on the same event, dropped either way at the hold.
   */
  private readonly resolveFailures = new Map<string, { position: number; failure: string }>();

  constructor(
    readonly tenantId: string,
    private readonly log: EventLog,
    private readonly lanes: Pick<Lanes, 'inbox' | 'runs'>,
    /** The stored positions of the versions routed here (and which of them still exist). */
    private readonly catalog: Pick<ProjectionCatalogRepository, 'versionsOf'>,
    private readonly runtime: Pick<TenantCode, 'resolveKeys'>,
    private readonly scheduler: LaneScheduler,
    private readonly events: TenantRouterEvents,
    /** The tenant's keysPerProjection limit: new keys past it are held in `!unresolved` (KEY_LIMIT). */
    private readonly keyCap?: LaneKeyCap,
    /** Tracing on: the appends' traces, which a pass over their positions continues. */
    private readonly traces?: AppendTraces,
  ) {}

  get size(): number {
    return this.versions.size;
  }

  get versionIds(): string[] {
    return [...this.versions.keys()];
  }

  has(versionId: string): boolean {
    return this.versions.has(versionId);
  }

  add(v: ProjectionVersion): void {
    this.versions.set(v.versionId, v);
    this.wake();
  }

  /**
   * Routes the version no more: resolves once no pass that could still write for it runs (a pass
   * checks before its write; the store refuses a dropped version's rows in any case).
   */
  async remove(versionId: string): Promise<void> {
    this.versions.delete(versionId);
    this.resolveErrors.delete(versionId);
    await this.pass;
  }

  /** Routes what the tenant appended (a pass now, or one more after the pass under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.pass) {
      this.passAgain = true;
      return;
    }
    this.pass = this.loop()
      .catch((e) => this.logger.error(`routing tenant ${this.tenantId} failed: ${e instanceof Error ? e.stack : e}`))
      .finally(() => {
        this.pass = undefined;
        if (this.passAgain) {
          this.passAgain = false;
          this.wake();
        }
      });
  }

  /** No more passes; resolves when the one under way has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.pass;
  }

  private async loop(): Promise<void> {
    // Where each version goes on from is the store's routed position, never this object's: a
    // dropped version finds no row and stops (it used to route the whole log again from 0).
    const positions = new Map<string, number>();
    while (!this.stopped) {
      for (const id of positions.keys()) if (!this.versions.has(id)) positions.delete(id);
      const unread = [...this.versions.keys()].filter((id) => !positions.has(id));
      if (unread.length) {
        const stored = await this.catalog.versionsOf(this.tenantId, unread);
        const found = new Set(stored.map((v) => v.versionId));
        for (const id of unread) if (!found.has(id)) this.gone(id);
        for (const v of stored) if (this.versions.has(v.versionId)) positions.set(v.versionId, v.routedPosition);
      }
      if (positions.size === 0) return;
      const started = this.traces && Date.now();
      const { routes, fullBatch } = await this.routeOnce(positions);
      if (this.stopped) return;
      const live = routes.filter((r) => this.versions.has(r.versionId));
      if (live.length === 0) return;
      const span = started ? this.routeSpan(positions, live, started) : undefined;
      const gone = new Set(await endWith(span, this.lanes.inbox.routeMany(this.tenantId, live)));
      for (const id of gone) {
        positions.delete(id);
        this.gone(id);
      }
      const lanes: { tenantId: string; versionId: string; key: string }[] = [];
      for (const r of live) {
        if (gone.has(r.versionId)) continue;
        positions.set(r.versionId, r.routedPosition);
        // The unresolved lane is held (the route made its row), never woken: an operator's retry wakes it.
        const unresolved = r.items.find((i) => i.key === UNRESOLVED_KEY);
        if (unresolved) {
          const thrown = this.resolveFailures.get(r.versionId);
          this.resolveFailures.delete(r.versionId);
          await this.lanes.runs.failed(
            { tenantId: this.tenantId, versionId: r.versionId, key: UNRESOLVED_KEY },
            {
              position: unresolved.position,
              error: this.resolveErrors.get(r.versionId) ?? '',
              hold: true,
              ...(thrown?.position === unresolved.position ? { failure: thrown.failure } : {}),
            },
          );
        }
        for (const key of new Set(r.items.map((i) => i.key)))
          if (key !== UNRESOLVED_KEY) lanes.push({ tenantId: this.tenantId, versionId: r.versionId, key });
      }
      await this.scheduler.wakeMany(lanes);
      this.events.routed();
      // Every read was short, so each was the log's end when read: an event committed since then
      // has woken this router again (one more pass follows), so reading again now finds nothing.
      if (!fullBatch) return;
    }
  }

  /**
   * One batch for every version: the versions standing at one position share the read and the
   * wire form of its events; every version's keys are asked at once (the executor sends them on
   * together).
   */
  private async routeOnce(positions: Map<string, number>): Promise<{ routes: VersionRoute[]; fullBatch: boolean }> {
    const byPosition = groupBy(positions.keys(), (id) => positions.get(id)!);
    const reads = await Promise.all(
      [...byPosition].map(async ([from, ids]) => ({ ids, events: await this.log.readAll(this.tenantId, from, ROUTE_BATCH) })),
    );
    const routes: VersionRoute[] = [];
    await Promise.all(
      reads
        .filter((r) => r.events.length > 0)
        .flatMap(({ ids, events }) => {
          const wire = events.map(toWireEvent);
          const routedPosition = events[events.length - 1].position;
          return ids.map(async (versionId) => {
            const v = this.versions.get(versionId);
            if (!v) return;
            let items = await this.resolve(v, events, wire);
            // Removed while ResolveKey ran (an untrack waits for this pass): write nothing for it.
            if (!this.versions.has(versionId) || this.stopped) return;
            if (this.keyCap) items = await this.capKeys(versionId, items);
            routes.push({ versionId, items, routedPosition });
          });
        }),
    );
    return { routes, fullBatch: reads.some((r) => r.events.length === ROUTE_BATCH) };
  }

  /** The pass's span (tracing on), from its start: the positions after the lowest it read from, up to the highest it routed. */
  private routeSpan(positions: Map<string, number>, live: VersionRoute[], started: number) {
    const from = Math.min(...positions.values()) + 1;
    const to = Math.max(...live.map((r) => r.routedPosition));
    return startRouteSpan(this.traces, this.tenantId, from, to, started, live.length);
  }

  private async capKeys(versionId: string, items: InboxItem[]): Promise<InboxItem[]> {
    const capped = await this.keyCap!.admit(this.tenantId, versionId, items);
    const firstUnresolved = items.find((i) => i.key === UNRESOLVED_KEY);
    if (capped.refused && (!firstUnresolved || capped.refused.position < firstUnresolved.position))
      this.resolveErrors.set(versionId, capped.refused.error);
    return holdWhole(capped.items);
  }

  private gone(versionId: string): void {
    this.versions.delete(versionId);
    this.resolveErrors.delete(versionId);
    this.resolveFailures.delete(versionId);
    this.events.gone(versionId);
  }

  private async resolve(v: ProjectionVersion, events: StoredEvent[], wire: WireEvent[]): Promise<InboxItem[]> {
    const { tenantId, versionId, className } = v;
    for (let attempt = 1; ; attempt++) {
      let keys;
      try {
        keys = await this.runtime.resolveKeys(tenantId, versionId, className, wire);
      } catch (e) {
        if (e instanceof HostCallError && e.failure !== 'UNAVAILABLE' && attempt >= RESOLVE_ATTEMPTS) {
          this.resolveErrors.set(versionId, `${e.failure}: ${e.message}`);
          return events.map((ev) => ({ key: UNRESOLVED_KEY, position: ev.position }));
        }
        if (this.stopped || !this.versions.has(versionId)) return []; // an untrack waits: no more attempts
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
        const r = eventKeys(k);
        if ('keys' in r) {
          // Several keys (IResolveKeys): the event goes to each key's lane; none: it is skipped.
          for (const key of r.keys) items.push({ key, position: events[i].position });
          return;
        }
        this.resolveErrors.set(versionId, r.error);
        if (k !== null && typeof k === 'object' && 'error' in k && !this.resolveFailures.has(versionId))
          this.resolveFailures.set(versionId, {
            position: events[i].position,
            failure: JSON.stringify(runtimeFailure(wire[i], k.error, events[i].position)),
          });
        items.push({ key: UNRESOLVED_KEY, position: events[i].position });
      });
      return items;
    }
  }
}
