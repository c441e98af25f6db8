import * as fs from 'node:fs';
import { DomainError } from './common/domain-error';
import { isoTime } from './common/iso-time';
import { loadConfig } from './config/app-config';
import { formatRate, LimitOverrides, parseOverrideText, RATE_LIMIT_NAMES } from './config/quota-policy';
import { TenantLimitsCatalog, TenantLimitsView } from './quotas/tenant-limits';
import { openStore } from './store/store.factory';
import { TenantDirectory } from './tenancy/tenant-directory';
import { TenantExporter } from './tenant-transfer/tenant-exporter';
import { TenantImporter } from './tenant-transfer/tenant-importer';
import { TenantRemover } from './tenant-transfer/tenant-remover';

const USAGE = `usage: npm run admin -- <command>
  create-tenant <name>            create a tenant and print its first API key (shown once)
  list-tenants                    list tenants
  issue-key <tenantId> [--scopes <s1,s2,…>] [--name <name>] [--expires-at <ISO time>]
                                  issue another API key for a tenant (shown once); without --scopes it holds
                                  every scope. Scopes: events:read, events:write, events:erase, state:read,
                                  deploy, keys:manage (--scopes '' : none, only GET /auth/whoami)
  list-keys <tenantId>            the tenant's keys not revoked (id, name, scopes, expiry; never secrets)
  revoke-key <tenantId> <keyId>   revoke a key
  get-limits <tenantId>           the tenant's quotas: what applies, and which are overridden
  set-limits <tenantId> <name>=<value>...
                                  override quotas: rates as 100/1s, 5000/10s, 60/1h; counts as integers; 0 is no
                                  limit; <name>=default drops an override. Names: appendRequests, appendEvents,
                                  uploads, streams, webhooksInFlight, storedEvents,
                                  projections, keysPerProjection, pendingDeliveries, eventWebhooks
  export <tenantId> [--out <file>]
                                  write the tenant's export (NDJSON) to the file, or to stdout
  import <file>                   recreate a tenant from an export file (refused if the store has it)
  delete-tenant <tenantId>        remove a tenant and every row it has
Moving a tenant from SQLite to PostgreSQL: export with DATA_DIR set, import with DATABASE_URL set
(docs/operations.md, "Moving a tenant / from SQLite to PostgreSQL").
Running instances see a change within QUOTA_OVERRIDES_CACHE_MS (5 s by default).
Works on the store the service uses (DATABASE_URL, else DATA_DIR), with or without the service running.`;

/** The admin API's operations without HTTP or ADMIN_TOKEN: whoever can read the store's config is admin. */
async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    console.log(USAGE);
    return cmd ? 0 : 2;
  }
  const commands = ['create-tenant', 'list-tenants', 'issue-key', 'list-keys', 'revoke-key', 'get-limits', 'set-limits'];
  if (![...commands, 'export', 'import', 'delete-tenant'].includes(cmd)) {
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
      case 'issue-key': {
        const [tenantId, ...flags] = args;
        console.log(JSON.stringify(await directory.issueRequestedKey(tenantId ?? '', keyFlags(flags)), null, 2));
        return 0;
      }
      case 'list-keys':
        console.log(JSON.stringify({ keys: await directory.listKeys(args[0] ?? '') }, null, 2));
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
      case 'export': {
        const [tenantId, flag, out] = args;
        if (!tenantId || (flag !== undefined && (flag !== '--out' || !out)))
          throw new DomainError('VALIDATION_FAILED', `export needs a tenant id, optionally --out <file>\n${USAGE}`);
        await writeExport(await new TenantExporter(store).open(tenantId), out);
        return 0;
      }
      case 'import': {
        if (!args[0]) throw new DomainError('VALIDATION_FAILED', `import needs an export file\n${USAGE}`);
        console.log(JSON.stringify(await new TenantImporter(store).importFile(args[0]), null, 2));
        return 0;
      }
      case 'delete-tenant': {
        const { rows } = await new TenantRemover(store).remove(args[0] ?? '');
        console.log(`removed tenant ${args[0]} (${rows} rows); running instances refuse its keys within API_KEY_CACHE_MS`);
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

/**
 * The export to a file (written beside it and renamed when complete, so a file of that name is
 * never a partial export) or to stdout.
 */
async function writeExport(chunks: AsyncGenerator<string>, out: string | undefined): Promise<void> {
  if (!out) {
    for await (const c of chunks) if (!process.stdout.write(c)) await new Promise((r) => process.stdout.once('drain', r));
    return;
  }
  const partial = `${out}.partial`;
  const fd = fs.openSync(partial, 'w');
  try {
    for await (const c of chunks) fs.writeSync(fd, c);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(partial, out);
}

/** `--scopes a,b --name n --expires-at t` → the admin API's key body (checked by parseKeySpec as the API's is). */
function keyFlags(flags: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (let i = 0; i < flags.length; i += 2) {
    const [flag, value] = [flags[i], flags[i + 1]];
    if (value === undefined) throw new DomainError('VALIDATION_FAILED', `${flag} needs a value\n${USAGE}`);
    if (flag === '--scopes')
      body.scopes = value
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    else if (flag === '--name') body.name = value;
    else if (flag === '--expires-at') body.expiresAt = value;
    else throw new DomainError('VALIDATION_FAILED', `unknown option '${flag}'\n${USAGE}`);
  }
  return body;
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
