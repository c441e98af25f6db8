import { Inject, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LaneEngine } from '../lanes/lane-engine';
import { LanesModule } from '../lanes/lanes.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { STORE, Store } from '../store/store.port';
import { TenancyModule } from '../tenancy/tenancy.module';
import { NDJSON, TenantTransferController } from './tenant-transfer.controller';
import { TenantExporter } from './tenant-exporter';
import { TenantImporter } from './tenant-importer';
import { ServiceTenantPresence } from './service-tenant-presence';
import { TenantPresence } from './tenant-presence.port';
import { TenantRemover } from './tenant-remover';

/**
 * Export, import and removal of a whole tenant (docs/operations.md, "Moving a tenant"). Sits
 * above the features (it drops a removed tenant's routers and assemblies): imported by AppModule only.
 */
@Module({
  imports: [TenancyModule, LanesModule, NotificationsModule],
  controllers: [TenantTransferController],
  providers: [
    { provide: TenantPresence, useClass: ServiceTenantPresence },
    {
      provide: TenantExporter,
      inject: [STORE],
      useFactory: (store: Store) => {
        const logger = new Logger('TenantTransfer');
        return new TenantExporter(store, (m) => logger.warn(m));
      },
    },
    {
      provide: TenantImporter,
      inject: [STORE, LaneEngine],
      useFactory: (store: Store, lanes: LaneEngine) =>
        new TenantImporter(store, (tenantId, versionIds) => lanes.revive(tenantId, versionIds)),
    },
    {
      provide: TenantRemover,
      inject: [APP_CONFIG, STORE, TenantPresence],
      useFactory: (config: AppConfig, store: Store, presence: TenantPresence) => {
        const logger = new Logger('TenantTransfer');
        return new TenantRemover(store, presence, { followUpMs: config.apiKeyCacheMs + 1_000, warn: (m) => logger.warn(m) });
      },
    },
  ],
})
export class TenantTransferModule implements OnModuleInit, OnModuleDestroy {
  constructor(
    @Inject(HttpAdapterHost) private readonly host: HttpAdapterHost,
    private readonly remover: TenantRemover,
  ) {}

  onModuleDestroy(): void {
    this.remover.close();
  }

  /** The import's body is an NDJSON stream handed to its route unread (spooled there, never buffered whole). */
  onModuleInit(): void {
    const fastify = this.host.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (fastify && !fastify.hasContentTypeParser(NDJSON))
      fastify.addContentTypeParser(NDJSON, (_req, payload, done) => done(null, payload));
  }
}
