// Lint: typescript-eslint's recommended rules, import cycles (type imports included), the layers of
// ARCHITECTURE.md ("Layers"), at most 400 lines a source file, and no bare sleeps in tests.
// Formatting is Prettier's (eslint-config-prettier turns off the rules it owns).
import path from 'node:path';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import noImportCycle from './scripts/eslint/no-import-cycle.mjs';

const FEATURES = ['events', 'reducers', 'lanes', 'projections', 'notifications', 'health'];
// Every folder of src/ but the composition root's own (compilation/, tenant-transfer/, openapi/).
const BELOW_COMPOSITION = ['common', 'config', 'store', 'observability', 'tenant-code', 'tenancy', 'quotas', ...FEATURES, 'event-webhooks'];
// no-restricted-paths matches `except` globs against absolute paths: every path here is made absolute.
const ROOT = import.meta.dirname;
const abs = (p) => path.join(ROOT, p);
const under = (...dirs) => dirs.map((d) => abs(`src/${d}/**`));
// One file as a glob (a zone whose `from` is a glob takes only glob exceptions).
const file = (p) => abs(p).replace(/\.ts$/, '.@(ts)');
const PORTS = [abs('src/**/*.port.ts')];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'runtime/**', 'sdk/**', 'examples/**', 'coverage/**', 'data/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX, local: { rules: { 'no-import-cycle': noImportCycle } } },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      // Key and parameter rules refuse control characters on purpose: their regular expressions name them.
      'no-control-regex': 'off',
      // import-x/no-cycle skips `import type` (hard-coded); this one counts every import (scripts/eslint/no-import-cycle.mjs).
      'local/no-import-cycle': ['error', { rootDir: ROOT }],
      'import-x/no-self-import': 'error',
      'import-x/no-useless-path-segments': 'error',
      'import-x/no-duplicates': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            // Foundation: common and config sit under everything.
            {
              target: abs('src/common/**'),
              from: abs('src/**'),
              except: [abs('src/common/**')],
              message: 'common/ imports nothing of the features',
            },
            {
              target: abs('src/config/**'),
              from: abs('src/**'),
              except: [abs('src/config/**'), abs('src/common/**')],
              message: 'config/ parses settings into its own types: it imports common/ only',
            },
            // Tracing is called by every hop: it calls none of them.
            {
              target: abs('src/observability/tracing/**'),
              from: abs('src/**'),
              except: [abs('src/observability/tracing/**'), abs('src/config/**')],
              message: 'observability/tracing/ is called by the hops and imports none of them (config/ only)',
            },
            // The store depends on nothing above it.
            {
              target: abs('src/store/**'),
              from: abs('src/**'),
              except: [abs('src/store/**'), abs('src/common/**'), abs('src/config/**')],
              message: 'the store depends on nothing above it',
            },
            // Services over the store: no feature.
            {
              target: under('tenant-code', 'tenancy', 'quotas'),
              from: under(...FEATURES, 'event-webhooks'),
              message: 'tenant-code, tenancy and quotas sit under the features',
            },
            // Among the services: quotas read who is asking (tenancy's request words); tenancy never asks how much.
            {
              target: under('tenancy'),
              from: under('quotas'),
              message: 'tenancy/ sits under quotas/: quotas read the request tenant, tenancy imports nothing of quotas',
            },
            // The features along an event's path: a later hop only through a port file (the caller owns its port;
            // the implementing module binds it and is @Global(): importing that module would undo the inversion).
            {
              target: under('events'),
              from: under('reducers', 'lanes', 'projections', 'notifications', 'health', 'event-webhooks'),
              except: PORTS,
              message: 'events/ reaches later hops only through a port (their module binds it, @Global())',
            },
            {
              target: under('reducers'),
              from: under('lanes', 'projections', 'notifications', 'health', 'event-webhooks'),
              except: PORTS,
              message: 'reducers/ reaches later hops only through a port (their module binds it, @Global())',
            },
            {
              target: under('lanes'),
              from: under('projections', 'notifications', 'health', 'event-webhooks'),
              except: PORTS,
              message: 'lanes/ reaches notifications only through a port (NotificationsModule binds it, @Global())',
            },
            {
              target: under('projections'),
              from: under('notifications', 'health', 'event-webhooks'),
              except: PORTS,
              message: 'projections/ reaches notifications only through a port (NotificationsModule binds it, @Global())',
            },
            {
              target: under('notifications'),
              from: under('events', 'reducers', 'lanes', 'projections', 'health'),
              // The event streams write the one shape of a stored event and parse the log's query as GET /events does.
              except: [abs('src/**/*.port.ts'), file('src/events/event-views.ts'), file('src/events/log-query.ts')],
              message: 'notifications/ sees the rest only through port files (and the event view and log query words)',
            },
            // Inside notifications: streams/ and webhooks/ read the log/ and never each other; the log knows neither.
            {
              target: under('notifications/log'),
              from: under('notifications/streams', 'notifications/webhooks'),
              message: 'the log knows neither streams nor webhooks',
            },
            {
              target: under('notifications/streams'),
              from: under('notifications/webhooks'),
              message: 'streams and webhooks share only the log',
            },
            {
              target: under('notifications/webhooks'),
              from: under('notifications/streams'),
              message: 'streams and webhooks share only the log',
            },
            // Event webhooks (a feature beside notifications): the features reach them only through events' port.
            {
              target: under(...FEATURES),
              from: abs('src/event-webhooks/**'),
              message: 'the features reach event-webhooks/ only through EventWebhooksAppended (a port of events/)',
            },
            // compilation/ hands compiled uploads to the catalogs, openapi/ describes every module's routes:
            // both sit above everything, imported by AppModule only.
            {
              target: under('common', 'config', 'store', 'tenant-code', 'tenancy', 'quotas', ...FEATURES, 'openapi'),
              from: under('compilation'),
              message: 'only AppModule imports compilation/',
            },
            {
              target: under('common', 'config', 'store', 'tenant-code', 'tenancy', 'quotas', ...FEATURES, 'compilation'),
              from: under('openapi'),
              message: 'only AppModule imports openapi/',
            },
            // Metrics (observability/metrics): the hops see only the AppMetrics port, which depends on nothing;
            // the rest (registry, /metrics, scrape-time gauges) is composition, imported by AppModule.
            {
              target: file('src/observability/metrics/app-metrics.ts'),
              from: abs('src/**'),
              message: 'the AppMetrics port depends on nothing of the service',
            },
            {
              target: under('tenant-code', 'tenancy', 'quotas', ...FEATURES),
              from: abs('src/observability/metrics/**'),
              except: [file('src/observability/metrics/app-metrics.ts')],
              message: 'a hop reaches the metrics only through the AppMetrics port (observability/metrics/app-metrics.ts)',
            },
            // dry-runs/ reads the store and runs tenant code through its ports: imported by AppModule only.
            {
              target: under(...BELOW_COMPOSITION, 'compilation', 'openapi', 'tenant-transfer'),
              from: under('dry-runs'),
              message: 'only AppModule imports dry-runs/',
            },
            {
              target: under(...BELOW_COMPOSITION, 'compilation', 'openapi'),
              from: under('tenant-transfer'),
              message: 'only AppModule and the admin CLI import tenant-transfer/',
            },
            // Nothing imports the app's composition root; the service never imports tests or benches.
            {
              target: abs('src/*/**'),
              from: [abs('src/app.module.ts'), abs('src/app.factory.ts'), abs('src/main.ts'), abs('src/admin-cli.ts')],
              message: 'the composition root is imported by nobody',
            },
            { target: abs('src/**'), from: [abs('test/**'), abs('bench/**')], message: 'the service does not import tests or benches' },
            // esctl is a client of the HTTP API: it shares no code with the service, and the service none with it.
            {
              target: abs('src/cli/**'),
              from: abs('src/**'),
              except: [abs('src/cli/**')],
              message: 'src/cli/ is a client of the HTTP API: it imports nothing of the service',
            },
            {
              target: [abs('src/!(cli)/**'), abs('src/*.ts')],
              from: abs('src/cli/**'),
              message: 'the service imports nothing of src/cli/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', 'import-x/no-restricted-paths': 'off' },
  },
  // A file readable in one sitting: every line counts (blank lines and comments too, simplest to explain).
  { files: ['src/**/*.ts'], rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] } },
  // Tests wait on conditions (until(...), an event the code exposes), never on a bare sleep; a pause that is
  // part of what a test proves goes through elapse(ms, why) (test/support/wait.ts), which says why.
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    ignores: ['test/support/wait.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'NewExpression[callee.name="Promise"] > :function > CallExpression.body[callee.name="setTimeout"]',
          message: 'a bare sleep: wait on a condition (until(...)) or, if time must pass, elapse(ms, why) from test/support/wait.ts',
        },
        {
          selector:
            'NewExpression[callee.name="Promise"] > :function > BlockStatement[body.length=1] > ExpressionStatement > CallExpression[callee.name="setTimeout"]',
          message: 'a bare sleep: wait on a condition (until(...)) or, if time must pass, elapse(ms, why) from test/support/wait.ts',
        },
        {
          selector: 'ImportDeclaration[source.value=/timers\\/promises$/]',
          message: 'a bare sleep: wait on a condition (until(...)) or, if time must pass, elapse(ms, why) from test/support/wait.ts',
        },
      ],
    },
  },
  {
    // The repository's own Node scripts (CommonJS).
    files: ['scripts/**/*.js', 'jest.config.js', 'test/support/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
  {
    // After eslint-config-prettier (which turns max-len off): Prettier wraps code at 140; this holds
    // comments to it too (long strings and URLs stay whole).
    rules: {
      'max-len': ['error', { code: 140, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
);
