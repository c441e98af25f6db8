import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AdminApi } from '../tenancy/public.decorator';
import { spoolBody } from './import-spool';
import { TenantExporter } from './tenant-exporter';
import { TenantImporter } from './tenant-importer';
import { TenantRemover } from './tenant-remover';
import { ApiOperation, json, noContent } from '../common/api-docs';
import { integer, object, string } from '../common/json-schema';

export const NDJSON = 'application/x-ndjson';

@AdminApi()
@Controller('admin/tenants')
export class TenantTransferController {
  constructor(
    private readonly exporter: TenantExporter,
    private readonly importer: TenantImporter,
    private readonly remover: TenantRemover,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':tenantId/export')
  @ApiOperation({
    tag: 'admin',
    summary: 'Export a tenant: everything not derived, as NDJSON (docs/operations.md, "Moving a tenant")',
    description:
      'First line a header {format: "eventstore-export", version: 1, tenantId, exportedAt, schemaVersion, store}, then one ' +
      '{table, row} per stored row (every column; times as epoch ms, bytes as base64; event data and metadata as the exact ' +
      'stored text), last a trailer {end: true, rows, counts}. Read from one snapshot of the store. Webhook secrets are not exported.',
    responses: { 200: { description: 'the export, streamed', contentType: 'application/x-ndjson', schema: string() } },
    errors: ['NOT_FOUND'],
  })
  async export(@Param('tenantId') tenantId: string, @Res() reply: FastifyReply): Promise<void> {
    const text = await this.exporter.open(tenantId);
    // Sent as it is read: an error half-way cuts the body short, and the missing trailer says so to an import.
    await reply
      .header('content-type', NDJSON)
      .header('content-disposition', `attachment; filename="tenant-${tenantId.replace(/[^A-Za-z0-9_.-]/g, '_')}.ndjson"`)
      .send(Readable.from(text));
  }

  @Post('import')
  @HttpCode(201)
  @ApiOperation({
    tag: 'admin',
    summary: 'Recreate a tenant from an export, in one transaction; derived state is rebuilt by the usual catch-up',
    body: {
      contentType: 'application/x-ndjson',
      schema: string(),
      description: 'an export file as GET /admin/tenants/{tenantId}/export wrote it; at most TENANT_IMPORT_MAX_BYTES (4 GiB by default)',
    },
    responses: {
      201: json(
        'imported',
        object({
          tenantId: string(),
          rows: integer(),
          counts: { type: 'object', additionalProperties: integer() },
          suspendedWebhooks: { type: 'array', items: string() },
          webhookSecrets: { const: 'regenerated' },
        }),
      ),
    },
    errors: ['TENANT_EXISTS', 'IMPORT_INVALID', 'IMPORT_TRUNCATED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
  })
  async import(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== NDJSON) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `an import body is ${NDJSON} (an export file)`);
    const max = this.config.tenantImportMaxBytes;
    // A refused body is left unread: the connection goes with the answer rather than reading the rest.
    const refuse = (e: unknown): never => {
      if (e instanceof DomainError && e.code === 'PAYLOAD_TOO_LARGE') void reply.header('connection', 'close');
      throw e;
    };
    const announced = Number(req.headers['content-length'] ?? 0);
    if (announced > max) refuse(new DomainError('PAYLOAD_TOO_LARGE', `an import body is at most ${max} bytes (TENANT_IMPORT_MAX_BYTES)`));
    return spoolBody(req.body as Readable, max, (file) => this.importer.importFile(file)).catch(refuse);
  }

  @Delete(':tenantId')
  @HttpCode(204)
  @ApiOperation({
    tag: 'admin',
    summary: 'Remove a tenant and every row it has, derived ones included',
    responses: { 204: noContent('removed') },
    errors: ['NOT_FOUND'],
  })
  async remove(@Param('tenantId') tenantId: string): Promise<void> {
    await this.remover.remove(tenantId);
  }
}
