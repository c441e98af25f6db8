import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { UploadKind, UploadRecord, UploadRepository } from '../store/upload-repository.port';
import { HostCallError } from './host-process';
import { CompileResult } from './runtime-protocol';

export type CompiledListener = (upload: UploadRecord) => Promise<void> | void;

export interface Compiler {
  compile(files: { path: string; content: string }[], kind?: UploadKind): Promise<CompileResult>;
}

/** How often a compile that kills the compiler host is retried before the upload is failed. */
const MAX_ATTEMPTS = 3;

/**
 * Uploads answer 202 at once; compiling happens here, in the background, one at a time. The
 * status lives in the store (pending → compiled | failed), so a restart finishes what was
 * pending instead of forgetting it. Listeners run after a compile is recorded (auto-binding
 * reducers, activating projections).
 */
export class CompileQueue {
  private readonly logger = new Logger('CompileQueue');
  private readonly listeners: CompiledListener[] = [];
  private readonly attempts = new Map<string, number>();
  private running?: Promise<void>;
  private again = false;
  private closed = false;

  constructor(
    private readonly uploads: UploadRepository,
    private readonly compiler: Compiler,
    private readonly now: () => number = Date.now,
  ) {}

  onCompiled(listener: CompiledListener): void {
    this.listeners.push(listener);
  }

  async submit(input: {
    tenantId: string;
    kind: UploadKind;
    sources: { path: string; content: string }[];
    meta?: Record<string, unknown>;
    uploadId?: string;
  }): Promise<UploadRecord> {
    const record = {
      uploadId: input.uploadId ?? randomUUID(),
      tenantId: input.tenantId,
      kind: input.kind,
      sources: input.sources,
      meta: input.meta ?? {},
      createdAt: this.now(),
    };
    await this.uploads.create(record);
    this.kick();
    return { ...record, status: 'pending', discovered: null, compilationError: null, assemblySha256: null, compiledAt: null };
  }

  /** Picks up what a previous run left pending. */
  start(): void {
    this.kick();
  }

  /** Resolves when nothing is pending any more (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      this.again = false;
      const pending = await this.uploads.listPending(20).catch((e) => {
        this.logger.error(`cannot read pending uploads: ${e}`);
        return [];
      });
      if (pending.length === 0) return;
      for (const upload of pending) {
        if (this.closed) return;
        try {
          await this.compileOne(upload);
        } catch (e) {
          // The store failed to record a result: stop here, the upload stays pending for the next kick.
          this.logger.error(`cannot record compile of ${upload.uploadId}: ${e instanceof Error ? e.stack : e}`);
          return;
        }
      }
    }
  }

  private async compileOne(upload: UploadRecord): Promise<void> {
    let result: CompileResult;
    try {
      result = await this.compiler.compile(upload.sources, upload.kind);
    } catch (e) {
      const attempt = (this.attempts.get(upload.uploadId) ?? 0) + 1;
      this.attempts.set(upload.uploadId, attempt);
      const why = e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e);
      if (attempt < MAX_ATTEMPTS) {
        this.logger.warn(`compile of ${upload.uploadId} failed (${why}); will retry`);
        return;
      }
      result = { ok: false, compilationError: `the compiler could not process this archive (${why})`, diagnostics: [], warnings: [] };
    }
    this.attempts.delete(upload.uploadId);
    const at = this.now();
    let done: UploadRecord;
    if (result.ok) {
      const discovered = result.discovered.map((d) => ({ ...d, kind: d.kind }));
      const assembly = Buffer.from(result.assembly, 'base64');
      await this.uploads.markCompiled(upload.tenantId, upload.uploadId, { discovered, assembly, assemblySha256: result.assemblySha256, at });
      done = { ...upload, status: 'compiled', discovered, assemblySha256: result.assemblySha256, compiledAt: at };
    } else {
      await this.uploads.markFailed(upload.tenantId, upload.uploadId, { compilationError: result.compilationError, at });
      done = { ...upload, status: 'failed', compilationError: result.compilationError, compiledAt: at };
    }
    for (const l of this.listeners) {
      try {
        await l(done);
      } catch (e) {
        this.logger.error(`listener failed for upload ${upload.uploadId}: ${e instanceof Error ? e.stack : e}`);
      }
    }
  }
}
