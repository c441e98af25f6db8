import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProjectionCatalog } from '../projections/projection-catalog';
import { ReducerCatalog } from '../reducers/reducer-catalog';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { HostCallError } from '../tenant-code/host/host-process';
import { CompileResult } from '../tenant-code/host/runtime-protocol';
import { AppMetrics, NO_METRICS } from '../observability/metrics/app-metrics';
import { UploadRecord, UploadRepository } from '../store/upload-repository.port';
import { Compiler } from '../tenant-code/compiler.port';
import { compileDiagnostics } from '../tenant-code/compiler/compile-diagnostics';

/** A compile that crashed the compiler or failed inside it (out of memory, killed) is tried once more, then failed. */
const MAX_CRASHES = 2;

/**
 * The background compiles: takes the next upload from the CompileQueue (tenants in turn, one compile
 * per tenant), compiles it, records the outcome in the store, and gives a compiled upload to its
 * owner — ReducerCatalog.autoBind for a reducer, ProjectionCatalog.deploy for a projection — before
 * the tenant's turn ends.
 *
 * A compile that outlives the deadline is failed, never retried (it would only hold a compiler
 * again); one that crashes the compiler or fails inside it is retried once, on the tenant's next turn.
 */
@Injectable()
export class CompileWorker {
  private readonly logger = new Logger('CompileWorker');
  private readonly crashes = new Map<string, number>();
  private readonly compiling = new Set<Promise<void>>();
  private loop?: Promise<void>;
  private readonly now: () => number = Date.now;

  constructor(
    private readonly queue: CompileQueue,
    private readonly compiler: Compiler,
    private readonly uploads: UploadRepository,
    // The catalogs by their class (tests give objects with the one method called).
    @Inject(ReducerCatalog) private readonly reducers: Pick<ReducerCatalog, 'autoBind'>,
    @Inject(ProjectionCatalog) private readonly projections: Pick<ProjectionCatalog, 'deploy'>,
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {}

  /** Starts taking compiles, first what a previous run left pending. */
  start(): void {
    this.loop ??= this.takeAll();
  }

  /** Closes the queue (no more compiles handed out) and waits for the compiles running (each ends by its deadline). */
  async close(): Promise<void> {
    await this.queue.close();
    await this.loop;
    await Promise.all(this.compiling);
  }

  private async takeAll(): Promise<void> {
    for (;;) {
      const upload = await this.queue.take();
      if (!upload) return;
      // Compiles of different tenants run side by side (the queue bounds them); this loop only takes.
      const compile = this.compileOne(upload)
        .catch((e) => {
          // The store failed to record a result: the upload stays pending for a later turn, after a pause.
          this.logger.error(`cannot record compile of ${upload.uploadId}: ${e instanceof Error ? e.stack : e}`);
          this.queue.pause();
        })
        .finally(() => {
          this.compiling.delete(compile);
          this.queue.release(upload);
        });
      this.compiling.add(compile);
    }
  }

  private async compileOne(upload: UploadRecord): Promise<void> {
    const started = this.now();
    let result: CompileResult;
    try {
      result = await this.compiler.compile(upload.sources, upload.kind);
    } catch (e) {
      const failed = this.failureOf(upload, e, this.now() - started);
      if (!failed) {
        this.metrics.compiled('retry', (this.now() - started) / 1000);
        // Left pending: tried again on a later turn, here or (its claim given up) on another instance.
        await this.uploads.releaseClaim(upload.tenantId, upload.uploadId, this.queue.owner);
        return;
      }
      result = failed;
    }
    this.metrics.compiled(result.ok ? 'compiled' : 'failed', (this.now() - started) / 1000);
    this.crashes.delete(upload.uploadId);
    const at = this.now();
    const claim = this.queue.owner;
    const diagnostics = compileDiagnostics(result);
    if (!result.ok) {
      if (
        !(await this.uploads.markFailed(upload.tenantId, upload.uploadId, {
          compilationError: result.compilationError,
          at,
          claim,
          diagnostics,
        }))
      )
        this.claimLost(upload);
      return;
    }
    const discovered = result.discovered.map((d) => ({ ...d, kind: d.kind }));
    const assembly = Buffer.from(result.assembly, 'base64');
    const kept = await this.uploads.markCompiled(upload.tenantId, upload.uploadId, {
      discovered,
      assembly,
      assemblySha256: result.assemblySha256,
      at,
      claim,
      diagnostics,
    });
    // Only the instance whose compile was recorded binds or deploys it: once per upload.
    if (!kept) return this.claimLost(upload);
    await this.handOver({ ...upload, status: 'compiled', discovered, diagnostics, assemblySha256: result.assemblySha256, compiledAt: at });
  }

  /**
   * This compile outlived its claim and another instance took the upload over (or recorded it):
   * this one's result is dropped, and the other's stands. Not an error of the service.
   */
  private claimLost(upload: UploadRecord): void {
    this.logger.warn(`compile of ${upload.uploadId} (tenant ${upload.tenantId}) outlived its claim; another instance's result stands`);
  }

  /** A compiled upload to its owner; its failure is logged (the compile stays recorded). */
  private async handOver(compiled: UploadRecord): Promise<void> {
    try {
      if (compiled.kind === 'reducer') await this.reducers.autoBind(compiled);
      else await this.projections.deploy(compiled);
    } catch (e) {
      this.logger.error(
        `${compiled.kind === 'reducer' ? 'auto-bind' : 'deploy'} failed for upload ${compiled.uploadId}: ${e instanceof Error ? e.stack : e}`,
      );
    }
  }

  /** What a compile that threw means: a failure to record, or undefined to leave the upload pending. */
  private failureOf(upload: UploadRecord, e: unknown, tookMs: number): CompileResult | undefined {
    const failure = e instanceof HostCallError ? e.failure : 'INTERNAL';
    const why = e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e);
    const failed = (compilationError: string): CompileResult => ({ ok: false, compilationError, diagnostics: [], warnings: [] });
    // Shutdown killed the compiler: not the archive's fault; the next run compiles it.
    if (this.queue.closed) return undefined;
    if (failure === 'UNAVAILABLE') {
      // No compiler could be started: not the archive's fault. Nothing is counted; handing out pauses.
      this.logger.error(`no compiler available (${why}); compiles resume in ${this.queue.retryMs} ms`);
      this.queue.pause();
      return undefined;
    }
    if (failure === 'TIMEOUT') {
      this.logger.warn(`compile of ${upload.uploadId} (tenant ${upload.tenantId}) exceeded the ${this.queue.deadlineMs} ms deadline`);
      return failed(
        `compilation exceeded the ${this.queue.deadlineMs} ms deadline and was stopped; it is not retried. ` +
          `Code that is very costly to compile (e.g. lambdas nested deep inside calls to overloaded methods, very deep nesting) cannot be accepted.`,
      );
    }
    const crashes = (this.crashes.get(upload.uploadId) ?? 0) + 1;
    this.crashes.set(upload.uploadId, crashes);
    if (crashes < MAX_CRASHES) {
      this.logger.warn(
        `compile of ${upload.uploadId} (tenant ${upload.tenantId}) failed in the compiler after ${tookMs} ms (${why}); it is tried once more`,
      );
      return undefined;
    }
    this.logger.warn(`compile of ${upload.uploadId} (tenant ${upload.tenantId}) failed in the compiler again (${why}); failed`);
    return failed(
      `the compiler failed on this archive ${crashes} times (${why.slice(0, 500)}), e.g. out of memory or stack; it is not retried again`,
    );
  }
}
