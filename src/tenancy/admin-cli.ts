import { DomainError } from '../common/domain-error';
import { isoTime } from '../common/iso-time';
import { loadConfig } from '../config/app-config';
import { formatRate, LimitOverrides, parseOverrideText, RATE_LIMIT_NAMES } from '../quotas/quota-policy';
import { TenantLimitsCatalog, TenantLimitsView } from '../quotas/tenant-limits';
import { openStore } from '../store/store.factory';
import { TenantDirectory } from './tenant-directory';

const USAGE = `usage: npm run admin -- <command>
  create-tenant <name>            create a tenant and print its first API key (shown once)
  list-tenants                    list tenants
  issue-key <tenantId>            issue another API key for a tenant (shown once)
  revoke-key <tenantId> <keyId>   revoke a key
  get-limits <tenantId>           the tenant's quotas: what applies, and which are overridden
  set-limits <tenantId> <name>=<value>...
                                  override quotas: rates as 100/1s, 5000/10s, 60/1h; counts as integers; 0 is no
                                  limit; <name>=default drops an override. Names: appendRequests, appendEvents,
                                  uploads, streams, webhooksInFlight, storedEvents,
                                  projections, keysPerProjection, pendingDeliveries, eventWebhooks
Running instances see a change within QUOTA_OVERRIDES_CACHE_MS (5 s by default).
Works on the store the service uses (DATABASE_URL, else DATA_DIR), with or without the service running.`;

/** The admin API's operations without HTTP or ADMIN_TOKEN: whoever can read the store's config is admin. */
async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    console.log(USAGE);
    return cmd ? 0 : 2;
  }
  if (!['create-tenant', 'list-tenants', 'issue-key', 'revoke-key', 'get-limits', 'set-limits'].includes(cmd)) {
    console.error(`unknown command '${cmd}'\n${USAGE}`);
    return 2;
  }
  const config = loadConfig();
  const store = await openStore(config);
  const directory = new TenantDirectory(store.tenants, 0);
  const limits = new TenantLimitsCatalog(store.tenants, config.quotas.defaults, 0);
  try {
    switch (cmd) {
      case 'create-tenant': {
        const { tenant, apiKey, keyId } = await directory.createTenant(args.join(' '));
        console.log(JSON.stringify({ tenantId: tenant.tenantId, name: tenant.name, keyId, apiKey }, null, 2));
        return 0;
      }
      case 'list-tenants':
        for (const t of await directory.listTenants()) console.log(`${t.tenantId}\t${t.name}\t${isoTime(t.createdAt)}`);
        return 0;
      case 'issue-key':
        console.log(JSON.stringify(await directory.issueKey(args[0] ?? ''), null, 2));
        return 0;
      case 'revoke-key':
        await directory.revokeKey(args[0] ?? '', args[1] ?? '');
        console.log('revoked');
        return 0;
      case 'get-limits':
        printLimits(await limits.view(args[0] ?? ''));
        return 0;
      case 'set-limits': {
        const [tenantId, ...settings] = args;
        if (!tenantId || settings.length === 0)
          throw new DomainError('VALIDATION_FAILED', `set-limits needs a tenant and at least one <name>=<value>\n${USAGE}`);
        const overrides: LimitOverrides = { ...(await limits.view(tenantId)).overrides };
        for (const setting of settings) {
          const [name, value] = setting.split('=', 2);
          if (value === undefined) throw new DomainError('VALIDATION_FAILED', `'${setting}' is not <name>=<value>`);
          if (value === 'default') delete overrides[name as keyof LimitOverrides];
          else Object.assign(overrides, parseOverrideText(name, value));
        }
        printLimits(await limits.replace(tenantId, overrides));
        return 0;
      }
      default:
        return 2;
    }
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    return 1;
  } finally {
    await store.close();
  }
}

/** One line per limit: its value (rates as 100/1s), and whether it is this tenant's own. */
function printLimits(v: TenantLimitsView): void {
  for (const [name, value] of Object.entries(v.limits)) {
    const shown = (RATE_LIMIT_NAMES as readonly string[]).includes(name) ? formatRate(value) : String(value);
    console.log(`${name}\t${shown}\t${name in v.overrides ? 'override' : 'default'}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
