import { Inject, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { TenantRepository } from '../store/tenant-repository.port';
import { AdminGuard } from './admin.guard';
import { ApiKeyGuard } from './api-key.guard';
import { FirstRun } from './first-run';
import { AdminTenantsController, WhoamiController } from './tenancy.controller';
import { TenantDirectory } from './tenant-directory';

@Module({
  controllers: [WhoamiController, AdminTenantsController],
  providers: [
    {
      provide: TenantDirectory,
      inject: [TenantRepository, APP_CONFIG],
      useFactory: (tenants: TenantRepository, config: AppConfig) => new TenantDirectory(tenants, config.apiKeyCacheMs),
    },
    FirstRun,
    AdminGuard,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [TenantDirectory, FirstRun],
})
export class TenancyModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('Tenancy');

  constructor(
    private readonly directory: TenantDirectory,
    private readonly firstRun: FirstRun,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.bootstrapApiKey) {
      const created = await this.firstRun.ensure();
      if (created)
        this.logger.log(`first run: created tenant ${created.tenantId} (${created.name}); its API key is printed once on stdout`);
      return;
    }
    const tenant = await this.directory.ensureKey(this.config.bootstrapApiKey, this.config.bootstrapTenantName);
    this.logger.log(`BOOTSTRAP_API_KEY names tenant ${tenant.tenantId} (${tenant.name})`);
  }
}
