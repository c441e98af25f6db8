import { Inject, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { STORE, Store } from '../store/store.port';
import { AdminGuard } from './admin.guard';
import { ApiKeyGuard } from './api-key.guard';
import { AdminTenantsController, WhoamiController } from './tenancy.controller';
import { TenantDirectory } from './tenant-directory';

@Module({
  controllers: [WhoamiController, AdminTenantsController],
  providers: [
    {
      provide: TenantDirectory,
      inject: [STORE, APP_CONFIG],
      useFactory: (store: Store, config: AppConfig) => new TenantDirectory(store.tenants, config.apiKeyCacheMs),
    },
    AdminGuard,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [TenantDirectory],
})
export class TenancyModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('Tenancy');

  constructor(
    private readonly directory: TenantDirectory,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.bootstrapApiKey) return;
    const tenant = await this.directory.ensureKey(this.config.bootstrapApiKey, this.config.bootstrapTenantName);
    this.logger.log(`BOOTSTRAP_API_KEY names tenant ${tenant.tenantId} (${tenant.name})`);
  }
}
