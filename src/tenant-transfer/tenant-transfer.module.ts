import { Inject, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LaneEngine } from '../lanes/lane-engine';
import { LanesModule } from '../lanes/lanes.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { SseStream } from '../notifications/streams/sse-stream';
import { WebSocketStreamServer } from '../notifications/streams/websocket-stream';
import { RuntimePool } from '../tenant-code/runtime-pool';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { STORE, Store } from '../store/store.port';
import { TenancyModule } from '../tenancy/tenancy.module';
import { TenantDirectory } from '../tenancy/tenant-directory';
import { NDJSON, TenantTransferController } from './tenant-transfer.controller';
import { TenantExporter } from './tenant-exporter';
import { TenantImporter } from './tenant-importer';
import { TenantPresence, TenantRemover } from './tenant-remover';

/**
 * Export, import and removal of a whole tenant (docs/operations.md, "Moving a tenant"). Sits
 * above the features (it drops a removed tenant's routers and assemblies): imported by AppModule only.
 */
@Module({
  imports: [TenancyModule, LanesModule, NotificationsModule],
  controllers: [TenantTransferController],
  providers: [
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
      inject: [APP_CONFIG, STORE, TenantDirectory, LaneEngine, RuntimePool, WebSocketStreamServer, SseStream],
      useFactory: (
        config: AppConfig,
        store: Store,
        directory: TenantDirectory,
        lanes: LaneEngine,
        runtime: RuntimePool,
        ws: WebSocketStreamServer,
        sse: SseStream,
      ) => {
        const presence: TenantPresence = {
          stop: async (tenantId) => {
            directory.forgetTenant(tenantId);
            sse.closeTenant(tenantId);
            await ws.closeTenant(tenantId);
          },
          forgetWork: async (tenantId, versionIds) => {
            for (const v of versionIds) await lanes.retire(tenantId, v);
            for (const a of runtime.loadedAssemblies(tenantId)) await runtime.unload(tenantId, a).catch(() => undefined);
          },
        };
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
