import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { TenantDirectory } from './tenant-directory';

export const FIRST_RUN_TENANT_NAME = 'default';

export interface FirstRunTenant {
  tenantId: string;
  name: string;
  apiKey: string;
}

/**
 * `npm start` on an empty store must lead to a working request without reading about keys first:
 * when nobody has said how tenants are made (no ADMIN_TOKEN, no BOOTSTRAP_API_KEY, FIRST_RUN_TENANT
 * not false) and the store has no tenant, one named `default` is created and its key printed once.
 * "The store has no tenant" is checked in the same transaction that creates it (serialised between
 * instances), so instances starting together create one, and a restart, which finds it, prints nothing.
 */
@Injectable()
export class FirstRun {
  /** Set at start when this instance created the tenant; printed once by main.ts (never logged). */
  created: FirstRunTenant | null = null;

  constructor(
    private readonly directory: TenantDirectory,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'adminToken' | 'bootstrapApiKey' | 'firstRunTenant'>,
  ) {}

  get applies(): boolean {
    return this.config.firstRunTenant && !this.config.adminToken && !this.config.bootstrapApiKey;
  }

  async ensure(): Promise<FirstRunTenant | null> {
    if (!this.applies) return null;
    const made = await this.directory.createFirstTenant(FIRST_RUN_TENANT_NAME);
    this.created = made && { tenantId: made.tenant.tenantId, name: made.tenant.name, apiKey: made.apiKey };
    return this.created;
  }
}

/**
 * What the user reads once: the key and a request that works as it is. Written straight to stdout,
 * not through the logger, which would redact the key; the only lines of output that are not JSON.
 */
export function firstRunNotice(t: FirstRunTenant, baseUrl: string): string {
  const event = JSON.stringify({ aggregateId: 'order-1', eventType: 'OrderPlaced', data: { total: 42 } });
  return [
    '',
    `First run: created tenant '${t.name}' (${t.tenantId}). Its API key, shown only this once:`,
    '',
    `  ${t.apiKey}`,
    '',
    'Try it: append an event, then read it back',
    `  curl -s -X POST ${baseUrl}/events -H 'x-api-key: ${t.apiKey}' -H 'content-type: application/json' -d '${event}'`,
    `  curl -s ${baseUrl}/events/order-1 -H 'x-api-key: ${t.apiKey}'`,
    '',
    'Keep the key: a restart on this store prints none. More tenants and keys: `npm run admin -- create-tenant <name>`,',
    'or set ADMIN_TOKEN for the admin API (README "Tenants and API keys"). FIRST_RUN_TENANT=false turns this off.',
    '',
    '',
  ].join('\n');
}
