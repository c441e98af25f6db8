import { Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LaneEngine } from '../lanes/lane-engine';
import { LanesModule } from '../lanes/lanes.module';
import { RuntimePool } from '../runtime/runtime-pool';
import { RuntimeModule } from '../runtime/runtime.module';
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
  imports: [TenancyModule, LanesModule, RuntimeModule],
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
    { provide: TenantImporter, inject: [STORE], useFactory: (store: Store) => new TenantImporter(store) },
    {
      provide: TenantRemover,
      inject: [STORE, TenantDirectory, LaneEngine, RuntimePool],
      useFactory: (store: Store, directory: TenantDirectory, lanes: LaneEngine, runtime: RuntimePool) => {
        const presence: TenantPresence = {
          forgetKeys: (tenantId) => directory.forgetTenant(tenantId),
          forgetWork: async (tenantId, versionIds) => {
            for (const v of versionIds) await lanes.retire(tenantId, v);
            for (const a of runtime.loadedAssemblies(tenantId)) await runtime.unload(tenantId, a).catch(() => undefined);
          },
        };
        return new TenantRemover(store, presence);
      },
    },
  ],
})
export class TenantTransferModule implements OnModuleInit {
  constructor(@Inject(HttpAdapterHost) private readonly host: HttpAdapterHost) {}

  /** The import's body is an NDJSON stream handed to its route unread (spooled there, never buffered whole). */
  onModuleInit(): void {
    const fastify = this.host.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (fastify && !fastify.hasContentTypeParser(NDJSON)) fastify.addContentTypeParser(NDJSON, (_req, payload, done) => done(null, payload));
  }
}
