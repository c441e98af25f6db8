import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/domain-error';
import { LongLived } from '../../common/route-options';
import { TenantRecord } from '../../store/tenant-repository.port';
import { CurrentTenant, TenantRequest } from '../../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../../tenancy/public.decorator';
import { projectionSseRequest, SseStream } from './sse-stream';
import { RequiresScope } from '../../tenancy/scopes';

/** The WebSocket upgrade of the same path is WebSocketStreamServer's (on the HTTP server's 'upgrade', not a route). */
@Controller('projections')
export class SseStreamController {
  constructor(private readonly sse: SseStream) {}

  /** A plain GET of the stream path (no WebSocket upgrade): server-sent events, if asked for and enabled. */
  @Get(':id/stream')
  @KeyInQuery()
  @LongLived()
  @RequiresScope('state:read')
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
