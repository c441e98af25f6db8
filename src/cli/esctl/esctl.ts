#!/usr/bin/env node
import { CodeKind, deploy, dryRun, Output, validate } from './deploy';
import { configPath, loadConfig, saveConfig } from './esctl-config';
import { status, state } from './inspect';
import { ServiceClient, ServiceError } from './service-client';
import { tail } from './tail';

/** esctl: the tenant's command line (issue 27 item 2). A client of the HTTP API only: it imports nothing of the service. */
const USAGE = `usage: esctl <command> [options]

  login --url URL --api-key KEY        check the key against the service and save both (0600)
  deploy reducer|projection <dir>      zip the .cs sources, upload, wait for the compile, print diagnostics
        [--id REDUCER_ID] [--config notifications.json] [--timeout SECONDS]
        [--no-bind]                    reducer: compile only, the live binding stays
  validate reducer|projection <dir>    every diagnostic at once, binding and storing nothing
  status [projection|reducer|aggregate-type <id>]
  state projection <projectionId> <key> | state aggregate <type> <aggregateId>
  tail <projectionId> [--after SEQUENCE] [--count N]   notifications, live (WebSocket)
  dry-run projection <projectionId> <dir> | dry-run reducer <aggregateType> <dir>
        [--class NAME] [--max-events N] [--from POSITION] [--to POSITION] [--keys a,b] [--sample-keys N] [--timeout SECONDS]
                                       run the candidate over the history, nothing deployed; print the report

The login is read from ${configPath()} (ESCTL_CONFIG moves it); ESCTL_URL and ESCTL_API_KEY override it.`;

/** esctl dry-run's options → the server's form fields. */
const DRY_RUN_FIELDS: [string, string][] = [
  ['class', 'className'],
  ['max-events', 'maxEvents'],
  ['from', 'fromPosition'],
  ['to', 'toPosition'],
  ['keys', 'keys'],
  ['sample-keys', 'sampleKeys'],
];

/** Options that take no value (set to 'true' when given). */
const FLAGS = new Set(['no-bind']);

/** Positional arguments, `--name value` options and the FLAGS. */
export function parseArgs(argv: string[]): { positional: string[]; options: Map<string, string> } {
  const positional: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (FLAGS.has(a.slice(2)) && a.startsWith('--')) options.set(a.slice(2), 'true');
    else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) options.set(a.slice(2, eq), a.slice(eq + 1));
      else {
        const value = argv[i + 1];
        if (value === undefined || value.startsWith('--')) throw new ServiceError(`${a} needs a value`);
        options.set(a.slice(2), value);
        i++;
      }
    } else positional.push(a);
  }
  return { positional, options };
}

const kindOf = (word: string | undefined): CodeKind => {
  if (word === 'reducer' || word === 'projection') return word;
  throw new ServiceError(`reducer or projection? (got '${word ?? ''}')`);
};

const intOption = (options: Map<string, string>, name: string): number | undefined => {
  const v = options.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new ServiceError(`--${name} takes a whole number (got '${v}')`);
  return Number(v);
};

function connect(): ServiceClient {
  const config = loadConfig();
  if (!config) throw new ServiceError("not logged in: run 'esctl login --url URL --api-key KEY' (or set ESCTL_URL and ESCTL_API_KEY)");
  return new ServiceClient(config);
}

export async function main(argv: string[], output: Output): Promise<number> {
  const { positional, options } = parseArgs(argv);
  const [command, ...rest] = positional;
  switch (command) {
    case 'login': {
      const url = (options.get('url') ?? process.env.ESCTL_URL ?? '').replace(/\/+$/, '');
      const apiKey = options.get('api-key') ?? process.env.ESCTL_API_KEY ?? '';
      if (!url || !apiKey) throw new ServiceError('usage: esctl login --url URL --api-key KEY');
      const client = new ServiceClient({ url, apiKey });
      const me = await client.expect(client.get('/auth/whoami'), 200);
      saveConfig({ url, apiKey });
      output.out(`logged in to ${url} as tenant ${me.tenantId}${me.name ? ` (${me.name})` : ''}; saved in ${configPath()}`);
      return 0;
    }
    case 'deploy':
      return deploy(
        connect(),
        kindOf(rest[0]),
        required(rest[1], 'deploy reducer|projection <dir>'),
        {
          id: options.get('id'),
          configFile: options.get('config'),
          timeoutMs: (intOption(options, 'timeout') ?? 120) * 1000,
          bind: !options.has('no-bind'),
        },
        output,
      );
    case 'validate':
      return validate(connect(), kindOf(rest[0]), required(rest[1], 'validate reducer|projection <dir>'), output);
    case 'status':
      return status(connect(), rest, output);
    case 'state':
      return state(connect(), rest, output);
    case 'tail': {
      const client = connect();
      const id = required(rest[0], 'tail <projectionId>');
      return tail(client.config, id, { afterSequence: options.get('after'), count: intOption(options, 'count') }, output);
    }
    case 'dry-run': {
      const usage = 'dry-run projection <projectionId> <dir> | dry-run reducer <aggregateType> <dir>';
      const fields: Record<string, string> = {};
      for (const [option, field] of DRY_RUN_FIELDS) if (options.has(option)) fields[field] = options.get(option)!;
      const timeoutMs = (intOption(options, 'timeout') ?? 300) * 1000;
      return dryRun(connect(), kindOf(rest[0]), required(rest[1], usage), required(rest[2], usage), { fields, timeoutMs }, output);
    }
    case undefined:
    case 'help':
      output.out(USAGE);
      return 0;
    default:
      throw new ServiceError(`unknown command '${command}'\n${USAGE}`);
  }
}

function required(value: string | undefined, usage: string): string {
  if (!value) throw new ServiceError(`usage: esctl ${usage}`);
  return value;
}

if (require.main === module) {
  const output: Output = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') };
  main(process.argv.slice(2), output).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      process.stderr.write(`esctl: ${e instanceof ServiceError ? e.message : (e as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
