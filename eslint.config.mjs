// Lint: typescript-eslint's recommended rules, import cycles, and the layers of ARCHITECTURE.md
// ("Layers"). Formatting is Prettier's (eslint-config-prettier turns off the rules it owns).
import path from 'node:path';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const FEATURES = ['events', 'reducers', 'lanes', 'projections', 'notifications', 'health'];
// no-restricted-paths matches `except` globs against absolute paths: every path here is made absolute.
const ROOT = import.meta.dirname;
const abs = (p) => path.join(ROOT, p);
const under = (...dirs) => dirs.map((d) => abs(`src/${d}/**`));
// One file as a glob (a zone whose `from` is a glob takes only glob exceptions).
const file = (p) => abs(p).replace(/\.ts$/, '.@(ts)');
const PORT_OR_MODULE = [abs('src/**/*.module.ts'), abs('src/**/*.port.ts')];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'runtime/**', 'sdk/**', 'examples/**', 'coverage/**', 'data/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
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
      'import-x/no-cycle': 'error',
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
              except: [abs('src/config/**'), abs('src/common/**'), file('src/quotas/quota-policy.ts')],
              message: 'config/ parses settings: it may use value types of quotas, nothing else',
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
              from: under(...FEATURES),
              except: [file('src/events/event-limits.ts')],
              message: 'tenant-code, tenancy and quotas sit under the features',
            },
            // The features along an event's path: upward only a module (composition) or a port file (the caller owns its port).
            {
              target: under('events'),
              from: under('reducers', 'lanes', 'projections', 'notifications', 'health'),
              except: PORT_OR_MODULE,
              message: 'events/ reaches later hops only through their module or a port',
            },
            {
              target: under('reducers'),
              from: under('lanes', 'projections', 'notifications', 'health'),
              except: PORT_OR_MODULE,
              message: 'reducers/ reaches later hops only through a module or a port',
            },
            {
              target: under('lanes'),
              from: under('projections', 'notifications', 'health'),
              except: PORT_OR_MODULE,
              message: 'lanes/ reaches notifications only through its module or a port',
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
            // Event webhooks (a feature beside notifications): the events module reaches them through their module only.
            {
              target: under(...FEATURES),
              from: abs('src/event-webhooks/**'),
              except: [abs('src/event-webhooks/*.module.ts')],
              message: 'the features reach event-webhooks/ only through its module (EVENT_WEBHOOKS_APPENDED is a port of events/)',
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
            // Nothing imports the app's composition root; the service never imports tests or benches.
            {
              target: abs('src/*/**'),
              from: [abs('src/app.module.ts'), abs('src/app.factory.ts'), abs('src/main.ts')],
              message: 'the composition root is imported by nobody',
            },
            { target: abs('src/**'), from: [abs('test/**'), abs('bench/**')], message: 'the service does not import tests or benches' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', 'import-x/no-restricted-paths': 'off' },
  },
  {
    // The repository's own Node scripts (CommonJS).
    files: ['scripts/**/*.js', 'jest.config.js'],
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
