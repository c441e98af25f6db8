import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';
import { FirstRun, firstRunNotice } from './tenancy/first-run';
import { startTracing, Tracing } from './observability/tracing/tracing-setup';

async function main(): Promise<void> {
  let config;
  let tracing: Tracing | null;
  try {
    config = loadConfig();
    // Before the app is built: its request hook and every hop see whether tracing is on.
    tracing = startTracing(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
  const { app, drain } = await createApp(config);
  const logger = new Logger('Main');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: finishing in-flight requests, then stopping`);
    const force = setTimeout(() => {
      logger.error(`shutdown took longer than ${config.shutdownGraceMs} ms; exiting`);
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    // In-flight requests finish (their appends commit and are answered) while new ones get 503;
    // then sockets close, and Nest's shutdown hooks drain the batcher and close the store.
    await drain.drain(config.shutdownGraceMs);
    app.getHttpAdapter().getInstance().server.closeAllConnections();
    await app.close();
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  // Background work (routers, lanes, catch-up) keeps its truth in the store and is retried by the
  // sweep; a stray rejection there must be seen in the logs, not take acknowledged work down with it.
  process.on('unhandledRejection', (reason) => {
    logger.error(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  });
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  const url = await app.getUrl();
  logger.log(`listening on ${url} (store: ${config.databaseUrl ? 'postgres' : 'sqlite in ' + config.dataDir})`);
  // After listen, so that the command it shows works the moment it is read.
  const firstRun = app.get(FirstRun).created;
  // In a later turn than the log lines above, which go out together at the end of this one.
  if (firstRun)
    setImmediate(() => process.stdout.write(firstRunNotice(firstRun, url.replace('[::1]', 'localhost').replace('127.0.0.1', 'localhost'))));
}

main().catch((e) => {
  // A refusal with its own status (the runtime sandbox missing a fence: 2) prints its message, not a stack.
  if (typeof e?.exitCode === 'number') {
    console.error(e.message);
    process.exit(e.exitCode);
  }
  console.error(e);
  process.exit(1);
});
