import { IncomingMessage, ServerResponse } from 'http';
import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../common/domain-error';
import { writeErrorAnswer } from '../../common/error-http-mapping';
import { EventStreamQuery, EventStreamSse } from '../../events/event-stream.port';
import { SseConnection } from './sse-connection';
import { StreamHub, StreamOwner, StreamRequest } from './stream-hub';
import { StreamOptions } from './stream-options';

export type { StreamOwner } from './stream-hub';

/**
 * `GET /projections/{id}/stream` and `GET /events/stream` as server-sent events, for a route that
 * has already authenticated the tenant and hijacked the reply. Event ids are sequences (positions),
 * so a browser's automatic reconnect (Last-Event-ID) resumes exactly where it stopped. StreamHub
 * admits the stream and owns its cursor, which writes to the SseConnection.
 */
@Injectable()
export class SseStream {
  private readonly logger = new Logger('SseStream');
  private readonly connections = new Set<SseConnection<unknown>>();

  constructor(
    private readonly hub: StreamHub,
    private readonly opts: StreamOptions,
  ) {}

  /**
   * `open`, answering its refusals itself: the route has taken the reply over, so no exception
   * filter will. An unexpected failure is logged and answered as INTERNAL.
   */
  async serve(req: IncomingMessage, res: ServerResponse, owner: StreamOwner, request: StreamRequest): Promise<void> {
    try {
      await this.open(req, res, owner, request);
    } catch (e) {
      if (!(e instanceof DomainError)) {
        const what = request.kind === 'events' ? 'SSE event stream' : `SSE stream of ${request.projectionId}`;
        this.logger.error(`${what} failed: ${e instanceof Error ? e.stack : e}`);
      }
      writeErrorAnswer(res, e instanceof DomainError ? e : new DomainError('INTERNAL', 'stream failed'));
    }
  }

  /**
   * Throws (TOO_MANY_STREAMS, NOT_FOUND, SSE_DISABLED, VALIDATION_FAILED) before writing anything,
   * so the caller can still answer with an error; resolves once the stream is running.
   */
  async open(req: IncomingMessage, res: ServerResponse, owner: StreamOwner, request: StreamRequest): Promise<void> {
    const stream = await this.hub.admit(owner, 'sse', res, request);
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
    const connection = new SseConnection(res, owner.tenantId, stream.wire, this.opts);
    this.connections.add(connection);
    const cursor = this.hub.open(stream, connection);
    res.once('close', () => {
      this.hub.leave(cursor);
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

/**
 * `GET /events/stream` as server-sent events (the events' EventStreamSse port): ids are positions,
 * so Last-Event-ID resumes after the last event received; the same caps, heartbeat and
 * slow-consumer cut as a projection's stream. Answers its own refusals.
 */
@Injectable()
export class SseEventStream implements EventStreamSse {
  constructor(private readonly sse: SseStream) {}

  serve(req: IncomingMessage, res: ServerResponse, owner: StreamOwner, query: EventStreamQuery, lastEventId?: string): Promise<void> {
    return this.sse.serve(req, res, owner, {
      kind: 'events',
      filters: { aggregateType: query.aggregateType, eventType: query.eventType, query: query.query },
      after: sseCursor(lastEventId, 'afterPosition', query.afterPosition),
    });
  }
}

/** A projection's stream as SSE asks for it: Last-Event-ID (a browser's reconnect) wins over afterSequence. */
export function projectionSseRequest(projectionId: string, afterSequence: string | undefined, lastEventId?: string): StreamRequest {
  return { kind: 'projection', projectionId, after: sseCursor(lastEventId, 'afterSequence', afterSequence) };
}

function sseCursor(lastEventId: string | undefined, field: string, fromQuery: string | undefined) {
  if (lastEventId !== undefined) return { field: 'Last-Event-ID', text: lastEventId };
  return fromQuery === undefined ? undefined : { field, text: fromQuery };
}
