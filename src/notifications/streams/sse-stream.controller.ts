import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/domain-error';
import { LongLived } from '../../common/route-options';
import { TenantRecord } from '../../store/tenant-repository.port';
import { CurrentTenant, TenantRequest } from '../../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../../tenancy/public.decorator';
import { projectionSseRequest, SseStream } from './sse-stream';
import { RequiresScope } from '../../tenancy/scopes';
import { ApiOperation } from '../../common/api-docs';
import { STREAM_MESSAGE_SCHEMA } from '../log/notification';
import { integer, string } from '../../common/json-schema';

/** The WebSocket upgrade of the same path is WebSocketStreamServer's (on the HTTP server's 'upgrade', not a route). */
@Controller('projections')
export class SseStreamController {
  constructor(private readonly sse: SseStream) {}

  /** A plain GET of the stream path (no WebSocket upgrade): server-sent events, if asked for and enabled. */
  @Get(':id/stream')
  @KeyInQuery()
  @LongLived()
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'notifications',
    summary: 'Stream state changes: a WebSocket upgrade, or server-sent events',
    description:
      'With `Upgrade: websocket` (the key in X-API-Key, `?apiKey=` or the subprotocol `apikey.<key>`): 101, then a `state_changed` ' +
      "message (StreamMessage) per notification, `{type: 'ping'}` keepalives to answer with `{type: 'pong'}`. " +
      'Without upgrade and with `Accept: text/event-stream` (projection uploaded with sse true): server-sent events, ' +
      'one `state_changed` event per notification with the StreamMessage as its data and the sequence as its id.',
    parameters: {
      afterSequence: { description: 'resume after this sequence', schema: integer({ minimum: 0 }) },
      'last-event-id': { description: 'SSE: the id of the last event received (a reconnecting EventSource sends it)' },
    },
    responses: {
      101: { description: 'WebSocket: switching protocols; messages are StreamMessage', schema: STREAM_MESSAGE_SCHEMA },
      200: { description: 'server-sent events; each event data is a StreamMessage', contentType: 'text/event-stream', schema: string() },
    },
    errors: ['NOT_FOUND', 'NOT_ACCEPTABLE', 'SSE_DISABLED', 'CURSOR_EXPIRED', 'TOO_MANY_STREAMS'],
  })
  async stream(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('afterSequence') afterSequence: string | undefined,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(accept ?? '').includes('text/event-stream')) {
      throw new DomainError('NOT_ACCEPTABLE', 'the stream is a WebSocket upgrade, or server-sent events with Accept: text/event-stream');
    }
    // The stream writes to the raw response from here on, its refusals included.
    reply.hijack();
    const keyHash = (req as TenantRequest).apiKeyHash!;
    await this.sse.serve(req.raw, reply.raw, { tenantId: tenant.tenantId, keyHash }, projectionSseRequest(id, afterSequence, lastEventId));
  }
}
