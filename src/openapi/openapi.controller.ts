import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createReadStream } from 'node:fs';
import { notFound } from '../common/domain-error';
import { Public } from '../tenancy/public.decorator';
import { DOCS_PAGE_HTML } from './docs-page';
import { OpenApiDocumentSource } from './openapi-document.source';
import { ApiOperation, json } from '../common/api-docs';
import { string } from '../common/json-schema';

/** The document and its reference page: public, like /health (they describe the API, not a tenant's data). */
@Controller()
export class OpenApiController {
  constructor(private readonly source: OpenApiDocumentSource) {}

  @Public()
  @Get('openapi.json')
  @ApiOperation({
    tag: 'system',
    summary: 'This document (OpenAPI 3.1)',
    responses: { 200: json('the document', { type: 'object' }) },
  })
  document(@Res() reply: FastifyReply): void {
    void reply.type('application/json; charset=utf-8').send(this.source.text());
  }

  @Public()
  @Get('docs')
  @ApiOperation({
    tag: 'system',
    summary: 'The API reference page (renders this document; no CDN)',
    responses: { 200: { description: 'HTML', contentType: 'text/html', schema: string() } },
  })
  page(@Res() reply: FastifyReply): void {
    void reply.type('text/html; charset=utf-8').send(DOCS_PAGE_HTML);
  }

  @Public()
  @Get('docs/:asset')
  @ApiOperation({
    tag: 'system',
    summary: "The reference page's scripts and styles",
    responses: { 200: { description: 'the asset', contentType: '*/*', schema: string() } },
    errors: ['NOT_FOUND'],
  })
  asset(@Param('asset') name: string, @Res() reply: FastifyReply): void {
    const asset = Object.hasOwn(this.source.assets, name) ? this.source.assets[name] : undefined;
    if (!asset) throw notFound(`docs asset '${name}'`);
    void reply
      .type(asset.contentType)
      .header('cache-control', 'public, max-age=3600')
      .send(asset.file ? createReadStream(asset.file) : asset.text);
  }
}
