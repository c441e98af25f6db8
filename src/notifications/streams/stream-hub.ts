import { Injectable } from '@nestjs/common';
import { DomainError, notFound } from '../../common/domain-error';
import { parseLogFilters } from '../../events/log-query';
import { scopeCheck } from '../../tenancy/scope-check';
import { StreamWakeups } from '../log/stream-wakeups.port';
import { EventStreamSource } from './event-stream-source.port';
import { EventCursorFeed } from './event-stream-source';
import { NotificationCursorFeed, parseSequence } from './notification-cursor';
import { CursorFeed, StreamCursor } from './stream-cursor';
import { StreamLimiter, StreamTransportKind } from './stream-limiter';
import { StreamOptions } from './stream-options';
import { StreamSource } from './stream-source.port';
import { StreamTransport } from './stream-transport.port';
import { EVENT_WIRE, NOTIFICATION_WIRE, StreamWire } from './stream-wire';
import { TenantStreamQuota } from './tenant-stream-quota.port';

/** Who opens a stream: the tenant, and the API key's hash (per-key caps, revocation). */
export interface StreamOwner {
  tenantId: string;
  keyHash: string;
}

/** A client's cursor as given: the field it came in (named by VALIDATION_FAILED) and its text. */
export interface GivenCursor {
  field: string;
  text: string;
}

/** What a client asks to follow, as its transport read it off the wire. */
export type StreamRequest =
  /** `projectionId` null: a path segment that does not decode (no projection has that id). */
  | { kind: 'projection'; projectionId: string | null; after?: GivenCursor }
  | {
      kind: 'events';
      filters: { aggregateType?: string | string[]; eventType?: string | string[]; query?: string | string[] };
      after?: GivenCursor;
    };

/** A connection being admitted (a socket before its handshake, an SSE response before its head): its 'close' gives the slots back. */
export interface AdmittedConnection {
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/** A stream admitted: whose it is, how its items are written, what its cursor reads and from where. */
export class AdmittedStream<T> {
  constructor(
    readonly owner: StreamOwner,
    readonly wire: StreamWire<T>,
    /** The projection followed; null: the tenant's log (GET /events/stream). */
    readonly projectionId: string | null,
    readonly feed: CursorFeed<T>,
    readonly after: number,
  ) {}
}

/** A registered cursor's place in the hub, to let go of when its connection ends. */
interface Membership {
  group: Set<StreamCursor<unknown>>;
  groups: Map<string, Set<StreamCursor<unknown>>>;
  id: string;
  unwatchKey: () => void;
}

/**
 * The streams of this instance, both transports: the one admission of a stream (the key and its
 * scope for a WebSocket, whose upgrade no route checks; the per-key, per-instance and tenant caps;
 * the cursor asked for, the projection or the log filters; where to start) and the owner of every
 * open stream's cursor, registered when its transport can send and woken from here
 * (StreamWakeups: the feeds call wakeProjection / wakeEventStreams → each cursor's wake).
 * The transports (WebSocketStreamServer, SseStream) only adapt their wire.
 */
@Injectable()
export class StreamHub implements StreamWakeups {
  /** Cursors of projection streams by tenant + projection. */
  private readonly byProjection = new Map<string, Set<StreamCursor<unknown>>>();
  /** Cursors of event streams by tenant. */
  private readonly byTenant = new Map<string, Set<StreamCursor<unknown>>>();
  private readonly members = new Map<StreamCursor<unknown>, Membership>();

  constructor(
    private readonly source: StreamSource,
    private readonly events: EventStreamSource,
    private readonly limiter: StreamLimiter,
    private readonly tenantStreams: TenantStreamQuota,
    private readonly options: StreamOptions,
  ) {}

  /**
   * A WebSocket's key (the SSE route's is checked by the HTTP hooks): its tenant, else UNAUTHORIZED;
   * the stream route's scope (its SSE side's @RequiresScope), else FORBIDDEN.
   */
  async authenticate(apiKey: string | undefined, kind: StreamRequest['kind']): Promise<StreamOwner> {
    const tenant = await this.source.authenticate(apiKey);
    if (!tenant) throw new DomainError('UNAUTHORIZED', 'missing or invalid API key');
    const scopeRefused = scopeCheck(tenant.scopes, kind === 'events' ? 'events:read' : 'state:read');
    if (scopeRefused) throw scopeRefused;
    return { tenantId: tenant.tenantId, keyHash: tenant.keyHash };
  }

  /**
   * The caps first (released when the connection closes, however it ends), then the stream's own
   * checks. Throws (TOO_MANY_STREAMS, NOT_FOUND, SSE_DISABLED, VALIDATION_FAILED) before the
   * transport has written anything.
   */
  async admit(
    owner: StreamOwner,
    transport: StreamTransportKind,
    connection: AdmittedConnection,
    request: StreamRequest,
  ): Promise<AdmittedStream<unknown>> {
    // The slot is taken before anything else is looked up and goes back when the connection closes,
    // whether the stream ran, was refused below or never finished its handshake.
    const release = this.limiter.acquire(owner.keyHash, transport);
    connection.once('close', release);
    if (connection.destroyed) release(); // gone during the lookup: its 'close' may have passed already
    const releaseTenant = await this.tenantStreams.acquireStream(owner.tenantId);
    connection.once('close', releaseTenant);
    if (connection.destroyed) releaseTenant();
    return request.kind === 'events'
      ? ((await this.eventStream(owner, request)) as AdmittedStream<unknown>)
      : ((await this.projectionStream(owner, transport, request)) as AdmittedStream<unknown>);
  }

  /**
   * The stream runs: its cursor, writing to `transport`, is registered for wakes and then starts its
   * catch-up (registered first: anything stored after its first read still wakes it); a key revoked
   * meanwhile ends it. The transport calls leave() when its connection closes.
   */
  open<T>(stream: AdmittedStream<T>, transport: StreamTransport<T>): StreamCursor<T> {
    const cursor = new StreamCursor(stream.feed, stream.after, transport, this.options);
    const { tenantId } = stream.owner;
    const [groups, id] =
      stream.projectionId === null ? [this.byTenant, tenantId] : [this.byProjection, projectionKey(tenantId, stream.projectionId)];
    let group = groups.get(id);
    if (!group) groups.set(id, (group = new Set()));
    group.add(cursor as StreamCursor<unknown>);
    const unwatchKey = this.source.watchKey(stream.owner.keyHash, () => transport.keyRevoked());
    this.members.set(cursor as StreamCursor<unknown>, { group, groups, id, unwatchKey });
    cursor.start();
    return cursor;
  }

  /** The stream's connection closed: its cursor stops and is no longer woken. */
  leave(cursor: StreamCursor<unknown>): void {
    cursor.stop();
    const m = this.members.get(cursor);
    if (!m) return;
    this.members.delete(cursor);
    m.unwatchKey();
    m.group.delete(cursor);
    if (m.group.size === 0 && m.groups.get(m.id) === m.group) m.groups.delete(m.id);
  }

  /** Streams open here whose cursor the hub holds (both transports). */
  openCount(): number {
    return this.members.size;
  }

  wakeProjection(tenantId: string, projectionId: string): void {
    const group = this.byProjection.get(projectionKey(tenantId, projectionId));
    if (group) for (const cursor of group) cursor.wake();
  }

  wakeEventStreams(tenantId: string): void {
    const group = this.byTenant.get(tenantId);
    if (group) for (const cursor of group) cursor.wake();
  }

  streamedProjections(): [tenantId: string, projectionId: string][] {
    return [...this.byProjection.keys()].map((id) => id.split('\u0000') as [string, string]);
  }

  streamedTenants(): string[] {
    return [...this.byTenant.keys()];
  }

  private async projectionStream(
    owner: StreamOwner,
    transport: StreamTransportKind,
    request: Extract<StreamRequest, { kind: 'projection' }>,
  ): Promise<AdmittedStream<unknown>> {
    const { tenantId } = owner;
    const { projectionId } = request;
    const explicitAfter = request.after ? parseSequence(request.after.field, request.after.text) : null;
    if (projectionId === null) throw notFound('projection');
    const projection = await this.source.projection(tenantId, projectionId);
    if (!projection) throw notFound(`projection '${projectionId}'`);
    if (transport === 'sse' && !projection.sse) {
      throw new DomainError(
        'SSE_DISABLED',
        `server-sent events are not enabled for projection '${projectionId}' (upload config "sse": true)`,
      );
    }
    const afterSequence = explicitAfter ?? (await this.source.headSequence(tenantId, projectionId));
    const feed = new NotificationCursorFeed(this.source, tenantId, projectionId);
    return new AdmittedStream(owner, NOTIFICATION_WIRE, projectionId, feed, afterSequence) as AdmittedStream<unknown>;
  }

  /** The filters and the cursor are checked as GET /events checks them; no cursor: from the head (live only). */
  private async eventStream(owner: StreamOwner, request: Extract<StreamRequest, { kind: 'events' }>): Promise<AdmittedStream<unknown>> {
    const filters = parseLogFilters(request.filters);
    const explicitAfter = request.after ? parseSequence(request.after.field, request.after.text) : null;
    const afterPosition = explicitAfter ?? (await this.events.headPosition(owner.tenantId));
    const feed = new EventCursorFeed(this.events, owner.tenantId, filters);
    return new AdmittedStream(owner, EVENT_WIRE, null, feed, afterPosition) as AdmittedStream<unknown>;
  }
}

function projectionKey(tenantId: string, projectionId: string): string {
  return `${tenantId}\u0000${projectionId}`;
}
