import { IncomingMessage, ServerResponse } from 'http';
import { Logger } from '@nestjs/common';
import { DomainError, notFound } from '../../common/domain-error';
import { writeErrorAnswer } from '../../common/error-http-mapping';
import { parseLogFilters } from '../../events/log-query';
import type { EventStreamQuery } from '../../events/event-stream.port';
import { eventCursorFeed, EventStreamSource } from './event-stream-source';
import { NotificationCursor, parseSequence } from './notification-cursor';
import { StreamCursor } from './stream-cursor';
import { NO_TENANT_STREAM_QUOTA, StreamLimiter, TenantStreamQuota } from './stream-limiter';
import { StreamSource } from './stream-source';
import { EVENT_WIRE, NOTIFICATION_WIRE, StreamWire } from './stream-wire';

/** Who opens a stream: the tenant, and the API key's hash (per-key caps). */
export interface StreamOwner {
  tenantId: string;
  keyHash: string;
}

export interface SseStreamOptions {
  /** Interval of the `: ping` comment that keeps proxies from timing out an idle stream. */
  heartbeatMs: number;
  /** Bytes queued on the response beyond which the client counts as too slow and is cut off. */
  maxBufferedBytes: number;
  pageSize: number;
}

/**
 * `GET /projections/{id}/stream` as Server-Sent Events, for a route that has already
 * authenticated the tenant and hijacked the reply. Event ids are sequences, so a browser's
 * automatic reconnect (Last-Event-ID) resumes exactly where it stopped.
 */
export class SseStream {
  private readonly logger = new Logger('SseStream');
  private readonly connections = new Set<SseConnection<unknown>>();

  constructor(
    private readonly source: StreamSource,
    private readonly opts: SseStreamOptions,
    private readonly limiter: StreamLimiter,
    private readonly tenantStreams: TenantStreamQuota = NO_TENANT_STREAM_QUOTA,
    /** The tenant's log, for `GET /events/stream` (serveEvents). */
    private readonly events?: EventStreamSource,
  ) {}

  /**
   * `GET /events/stream` as server-sent events (the port EVENT_STREAM_SSE): ids are positions, so
   * Last-Event-ID resumes after the last event received; the same caps, heartbeat and slow-consumer
   * cut as a projection's stream. Answers its own refusals, as `serve` does.
   */
  async serveEvents(req: IncomingMessage, res: ServerResponse, owner: StreamOwner, query: EventStreamQuery, lastEventId?: string) {
    try {
      const events = this.events;
      if (!events) throw new DomainError('NOT_FOUND', 'route not found');
      await this.open(req, res, owner, async () => {
        const filters = parseLogFilters(query);
        const explicitAfter =
          lastEventId !== undefined
            ? parseSequence('Last-Event-ID', lastEventId)
            : query.afterPosition !== undefined
              ? parseSequence('afterPosition', query.afterPosition)
              : null;
        const afterPosition = explicitAfter ?? (await events.headPosition(owner.tenantId));
        return {
          wire: EVENT_WIRE,
          cursor: (send) => new StreamCursor(eventCursorFeed(events, owner.tenantId, filters), afterPosition, send, this.opts),
        } as OpenSse<unknown>;
      });
    } catch (e) {
      if (!(e instanceof DomainError)) this.logger.error(`SSE event stream failed: ${e instanceof Error ? e.stack : e}`);
      writeErrorAnswer(res, e instanceof DomainError ? e : new DomainError('INTERNAL', 'stream failed'));
    }
  }

  /**
   * `handle`, answering its refusals itself: the route has taken the reply over, so no exception
   * filter will. An unexpected failure is logged and answered as INTERNAL.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    owner: StreamOwner,
    projectionId: string,
    query: { afterSequence?: string },
    lastEventId?: string,
  ): Promise<void> {
    try {
      await this.handle(req, res, owner, projectionId, query, lastEventId);
    } catch (e) {
      if (!(e instanceof DomainError)) this.logger.error(`SSE stream of ${projectionId} failed: ${e instanceof Error ? e.stack : e}`);
      writeErrorAnswer(res, e instanceof DomainError ? e : new DomainError('INTERNAL', 'stream failed'));
    }
  }

  /**
   * Throws (TOO_MANY_STREAMS, NOT_FOUND, SSE_DISABLED, VALIDATION_FAILED) before writing anything,
   * so the caller can still answer with an error; resolves once the stream is running.
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    owner: StreamOwner,
    projectionId: string,
    query: { afterSequence?: string },
    lastEventId?: string,
  ): Promise<void> {
    const { tenantId } = owner;
    await this.open(req, res, owner, async () => {
      const explicitAfter =
        lastEventId !== undefined
          ? parseSequence('Last-Event-ID', lastEventId)
          : query.afterSequence !== undefined
            ? parseSequence('afterSequence', query.afterSequence)
            : null;
      const projection = await this.source.projection(tenantId, projectionId);
      if (!projection) throw notFound(`projection '${projectionId}'`);
      if (!projection.sse)
        throw new DomainError(
          'SSE_DISABLED',
          `server-sent events are not enabled for projection '${projectionId}' (upload config "sse": true)`,
        );
      const afterSequence = explicitAfter ?? (await this.source.headSequence(tenantId, projectionId));
      return {
        wire: NOTIFICATION_WIRE,
        cursor: (send) => new NotificationCursor(this.source, tenantId, projectionId, afterSequence, send, this.opts),
      } as OpenSse<unknown>;
    });
  }

  /** The caps first (released when the response closes, however it ends), then the stream's own checks, then the stream. */
  private async open(req: IncomingMessage, res: ServerResponse, owner: StreamOwner, admit: () => Promise<OpenSse<unknown>>) {
    // Counted with the WebSockets; the slot goes back when the response closes, however it ends.
    const release = this.limiter.acquire(owner.keyHash, 'sse');
    res.once('close', release);
    if (res.destroyed) release();
    const releaseTenant = await this.tenantStreams.acquireStream(owner.tenantId);
    res.once('close', releaseTenant);
    if (res.destroyed) releaseTenant();
    const stream = await admit();
    if (res.destroyed || req.destroyed) return;

    // A quiet stream is not an idle connection: the heartbeat and the slow-consumer cut look after it.
    req.socket.setTimeout(0);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      // Tells nginx not to buffer the response, which would hold events back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const connection = new SseConnection(res, owner.tenantId, stream, this.opts);
    this.connections.add(connection);
    // A key revoked or expired while the stream runs ends it (the key was checked only at its start).
    const unwatch = this.source.watchKey(owner.keyHash, () => connection.end({ code: 'KEY_REVOKED' }));
    res.once('close', () => {
      unwatch();
      this.connections.delete(connection);
      connection.stop();
    });
  }

  connectionCount(): number {
    return this.connections.size;
  }

  /** A removed tenant's streams (src/tenant-transfer): ended. */
  closeTenant(tenantId: string): void {
    for (const connection of this.connections) {
      if (connection.tenantId !== tenantId) continue;
      connection.end();
      this.connections.delete(connection);
    }
  }

  close(): void {
    for (const connection of this.connections) connection.end();
    this.connections.clear();
  }
}

/** A stream admitted: how its items are written, and its cursor once the response can take them. */
interface OpenSse<T> {
  wire: StreamWire<T>;
  cursor: (send: (item: T) => boolean) => StreamCursor<T>;
}

class SseConnection<T> {
  private readonly cursor: StreamCursor<T>;
  private readonly wire: StreamWire<T>;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    readonly tenantId: string,
    open: OpenSse<T>,
    private readonly opts: SseStreamOptions,
  ) {
    this.wire = open.wire;
    this.cursor = open.cursor(this.send);
    this.cursor.onError = this.onCursorError;
    this.heartbeat = setInterval(() => this.res.write(': ping\n\n'), opts.heartbeatMs);
    this.cursor.start();
  }

  stop(): void {
    clearInterval(this.heartbeat);
    this.cursor.stop();
  }

  end(error?: Record<string, unknown>): void {
    this.stop();
    if (this.res.writableEnded) return;
    if (error) this.res.write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
    this.res.end();
  }

  private readonly send = (item: T): boolean => {
    if (this.res.writableEnded || this.res.destroyed) return false;
    const n = this.wire.numberOf(item);
    this.res.write(`id: ${n}\nevent: ${this.wire.sseEvent}\ndata: ${this.wire.text(item)}\n\n`);
    if (this.res.writableLength <= this.opts.maxBufferedBytes) return true;
    // The error event queues behind everything already written, so the client has all up to this item.
    this.end({ code: 'SLOW_CONSUMER', [this.wire.resumeField]: n });
    return false;
  };

  private readonly onCursorError = (err: unknown): void => {
    if (err instanceof DomainError && err.code === 'CURSOR_EXPIRED') {
      this.end({ code: 'CURSOR_EXPIRED', oldestSequence: err.details.oldestSequence });
    } else {
      this.end({ code: 'INTERNAL' });
    }
  };
}
