import { isoTime } from '../common/iso-time';
import { loadConfig } from '../config/app-config';
import { openStore } from '../store/store.factory';
import { TenantDirectory } from './tenant-directory';

const USAGE = `usage: npm run admin -- <command>
  create-tenant <name>            create a tenant and print its first API key (shown once)
  list-tenants                    list tenants
  issue-key <tenantId>            issue another API key for a tenant (shown once)
  revoke-key <tenantId> <keyId>   revoke a key
Works on the store the service uses (DATABASE_URL, else DATA_DIR), with or without the service running.`;

/** The admin API's operations without HTTP or ADMIN_TOKEN: whoever can read the store's config is admin. */
async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    console.log(USAGE);
    return cmd ? 0 : 2;
  }
  if (!['create-tenant', 'list-tenants', 'issue-key', 'revoke-key'].includes(cmd)) {
    console.error(`unknown command '${cmd}'\n${USAGE}`);
    return 2;
  }
  const store = await openStore(loadConfig());
  const directory = new TenantDirectory(store.tenants, 0);
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
