import { IncomingMessage, ServerResponse } from 'http';
import { Logger } from '@nestjs/common';
import { DomainError, notFound } from '../../common/domain-error';
import { writeErrorAnswer } from '../../common/error-http-mapping';
import { Notification, streamText } from '../log/notification';
import { NotificationCursor, parseSequence } from './notification-cursor';
import { NO_TENANT_STREAM_QUOTA, StreamLimiter, TenantStreamQuota } from './stream-limiter';
import { StreamSource } from './stream-source';

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
  private readonly connections = new Set<SseConnection>();

  constructor(
    private readonly source: StreamSource,
    private readonly opts: SseStreamOptions,
    private readonly limiter: StreamLimiter,
    private readonly tenantStreams: TenantStreamQuota = NO_TENANT_STREAM_QUOTA,
  ) {}

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
    // Counted with the WebSockets; the slot goes back when the response closes, however it ends.
    const release = this.limiter.acquire(owner.keyHash, 'sse');
    res.once('close', release);
    if (res.destroyed) release();
    const releaseTenant = await this.tenantStreams.acquireStream(tenantId);
    res.once('close', releaseTenant);
    if (res.destroyed) releaseTenant();
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
    const connection = new SseConnection(res, this.source, tenantId, projectionId, afterSequence, this.opts);
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

class SseConnection {
  private readonly cursor: NotificationCursor;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    source: StreamSource,
    readonly tenantId: string,
    projectionId: string,
    afterSequence: number,
    private readonly opts: SseStreamOptions,
  ) {
    this.cursor = new NotificationCursor(source, tenantId, projectionId, afterSequence, this.send, opts);
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

  private readonly send = (n: Notification): boolean => {
    if (this.res.writableEnded || this.res.destroyed) return false;
    this.res.write(`id: ${n.sequence}\nevent: state_changed\ndata: ${streamText(n)}\n\n`);
    if (this.res.writableLength <= this.opts.maxBufferedBytes) return true;
    // The error event queues behind everything already written, so the client has all up to n.
    this.end({ code: 'SLOW_CONSUMER', resumeAfterSequence: n.sequence });
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
