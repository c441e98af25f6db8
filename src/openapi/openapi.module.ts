import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OpenApiController } from './openapi.controller';
import { OpenApiDocumentSource } from './openapi-document.source';

/** GET /openapi.json and GET /docs: the API described from its own routes, DTOs and views. Imported by AppModule only. */
@Module({
  imports: [DiscoveryModule],
  controllers: [OpenApiController],
  providers: [OpenApiDocumentSource],
})
export class OpenApiModule {}
