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
  async remove(@Param('tenantId') tenantId: string): Promise<void> {
    await this.remover.remove(tenantId);
  }
}
