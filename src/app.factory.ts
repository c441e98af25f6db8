import { LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import multipart from '@fastify/multipart';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { ErrorFilter } from './common/error.filter';
import { RequestDrain } from './common/request-drain';
import { AppConfig, LogLevel } from './config/app-config';
import { LIMITS } from './events/event-limits';
import { DEFAULT_ARCHIVE_LIMITS } from './runtime/archive-reader';
import { mountBullBoard } from './lanes/bull-board';
import { LaneScheduler } from './lanes/lane-scheduler.port';
import { LANE_SCHEDULER } from './projections/projections.module';
import { adminTokenMatches } from './tenancy/admin.guard';

const NEST_LEVELS: Record<LogLevel, NestLogLevel[]> = {
  silent: [],
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/** Builds the whole service (not listening yet); main.ts and the e2e tests share it. */
export interface ServiceApp {
  app: NestFastifyApplication;
  drain: RequestDrain;
}

export async function createApp(config: AppConfig): Promise<ServiceApp> {
  const adapter = new FastifyAdapter({
    bodyLimit: LIMITS.bodyBytes,
    // Per-request logging costs a large share of an append's CPU; errors are logged by ErrorFilter.
    logger: config.logLevel === 'trace' ? { level: 'trace' } : false,
    // Keep-alive sockets idle at shutdown are closed so close() does not wait on them.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  const fastify = adapter.getInstance();
  // Only JSON is accepted as a body: anything else is 415, not a string the handlers must reject.
  fastify.removeContentTypeParser(['text/plain']);
  const drain = new RequestDrain();
  drain.install(fastify);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: NEST_LEVELS[config.logLevel],
    abortOnError: false,
    // Fastify's own JSON parser only: Nest would add form-urlencoded, which no endpoint accepts (415).
    bodyParser: false,
  });
  // Also receives Fastify's body-parsing errors, which Nest routes through the filters.
  app.useGlobalFilters(new ErrorFilter());
  // Uploads: one archive per request, capped at the archive limit while it streams in.
  await app.register(multipart as any, {
    limits: { fileSize: DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  });
  // Operators' view of the lane queues (BullMQ only), behind the admin token like the admin API.
  const scheduler = app.get<LaneScheduler>(LANE_SCHEDULER, { strict: false });
  if (scheduler.kind === 'bullmq' && config.adminToken) {
    const token = config.adminToken;
    const queue = (scheduler as unknown as { boardAdapter(): import('bullmq').Queue }).boardAdapter();
    await mountBullBoard(fastify, [queue], '/admin/queues', (req) => adminTokenMatches(req.headers.authorization, token));
  }
  return { app, drain };
}
