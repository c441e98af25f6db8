import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { MultipartUpload } from '../common/multipart-upload';
import { DryRunSettings } from '../config/dry-run-settings';
import { BindingRepository } from '../store/reducer-state.port';
import { ProjectionCatalogRepository } from '../store/projection-catalog.port';
import { readSourceArchive, SourceFile } from '../tenant-code/compiler/archive-reader';
import { Compiler } from '../tenant-code/compiler.port';
import { HostCallError } from '../tenant-code/host/host-process';
import { compileDiagnostics } from '../tenant-code/compiler/compile-diagnostics';
import { Discovered } from '../tenant-code/host/runtime-protocol';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { TransientAssemblies } from '../tenant-code/transient-assemblies';
import { DryRunOptions, parseDryRunOptions } from './dry-run-options';
import { DryRunReport, DryRunStatusView } from './dry-run-views';
import { DryRunProgress } from './history-replay';
import { ProjectionDryRun } from './projection-dry-run';
import { ReducerDryRun } from './reducer-dry-run';

type Kind = 'projection' | 'reducer';

interface DryRunRecord {
  view: DryRunStatusView;
  tenantId: string;
  progress: DryRunProgress;
  /** When a finished run is forgotten (epoch ms). */
  expiresAt?: number;
}

/** What one run compiles and folds against. */
interface Target {
  kind: Kind;
  tenantId: string;
  target: string;
  liveVersionId?: string | null;
  bound?: { reducerId: string; className: string } | null;
}

/**
 * Dry runs (issue 27 item 4): a candidate archive compiled (nothing stored, nothing bound or
 * promoted), run over the tenant's history in memory (ProjectionDryRun, ReducerDryRun), reported.
 * A run is no fact of the service: it lives in this instance's memory, answered 202 at once and
 * read by its id while it runs and for DRY_RUN_KEEP_MS after (another instance does not know it).
 * One running per tenant on an instance. The candidate's assembly is held in memory
 * (TransientAssemblies) and unloaded from the executors when the run ends, whatever its outcome.
 */
export class DryRuns {
  private readonly logger = new Logger('DryRuns');
  private readonly runs = new Map<string, DryRunRecord>();
  /** tenantId → the dryRunId running. */
  private readonly running = new Map<string, string>();

  constructor(
    private readonly compiler: Compiler,
    private readonly code: TenantCode,
    private readonly transient: TransientAssemblies,
    private readonly projections: ProjectionCatalogRepository,
    private readonly bindings: BindingRepository,
    private readonly projectionRun: ProjectionDryRun,
    private readonly reducerRun: ReducerDryRun,
    private readonly settings: DryRunSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** POST /projections/{id}/dry-run: by projectionId or name; compared with its active version (else its pending one). */
  async startProjection(
    tenantId: string,
    id: string,
    form: MultipartUpload,
  ): Promise<{ dryRunId: string; status: 'running'; message: string }> {
    const p = (await this.projections.get(tenantId, id)) ?? (await this.projections.getByName(tenantId, id));
    if (!p) throw notFound(`projection '${id}'`);
    return this.start({ kind: 'projection', tenantId, target: p.projectionId, liveVersionId: p.activeVersion ?? p.pendingVersion }, form);
  }

  /** POST /aggregate-types/{type}/dry-run: compared with the reducer bound to the type (none: every aggregate is added). */
  async startReducer(tenantId: string, aggregateType: string, form: MultipartUpload) {
    const b = await this.bindings.get(tenantId, aggregateType);
    return this.start(
      { kind: 'reducer', tenantId, target: aggregateType, bound: b ? { reducerId: b.reducerId, className: b.className } : null },
      form,
    );
  }

  /** GET …/dry-runs/{dryRunId}: the run's status, progress and (completed) report. */
  status(tenantId: string, kind: Kind, target: string, dryRunId: string): DryRunStatusView {
    this.forgetExpired();
    const r = this.runs.get(dryRunId);
    // Another tenant's run, or another target's, is as unknown as none.
    if (!r || r.tenantId !== tenantId || r.view.kind !== kind || r.view.target !== target)
      throw notFound(`dry run '${dryRunId}' (runs are kept on the instance that ran them for DRY_RUN_KEEP_MS)`);
    return { ...r.view, progress: { ...r.progress } };
  }

  private async start(t: Target, form: MultipartUpload): Promise<{ dryRunId: string; status: 'running'; message: string }> {
    this.forgetExpired();
    if (!form.file) throw validationFailed('file', 'a multipart part named "file" holding a zip archive is required');
    const options = parseDryRunOptions(form.fields, this.settings);
    const sources = await readSourceArchive(form.file);
    const busy = this.running.get(t.tenantId);
    if (busy) throw new DomainError('DRY_RUN_RUNNING', `a dry run of this tenant is running: ${busy}; one at a time`, { dryRunId: busy });
    const dryRunId = randomUUID();
    const progress: DryRunProgress = { eventsRead: 0, keysSeen: 0, position: 0 };
    const view: DryRunStatusView = {
      dryRunId,
      kind: t.kind,
      target: t.target,
      status: 'compiling',
      startedAt: new Date(this.now()).toISOString(),
      finishedAt: null,
      progress,
    };
    const record: DryRunRecord = { view, tenantId: t.tenantId, progress };
    this.runs.set(dryRunId, record);
    this.running.set(t.tenantId, dryRunId);
    void this.execute(t, record, sources, options).finally(() => {
      this.running.delete(t.tenantId);
      record.expiresAt = this.now() + this.settings.keepMs;
      record.view.finishedAt = new Date(this.now()).toISOString();
      record.view.expiresAt = new Date(record.expiresAt).toISOString();
    });
    const path = t.kind === 'projection' ? `/projections/${t.target}` : `/aggregate-types/${t.target}`;
    return { dryRunId, status: 'running', message: `poll GET ${path}/dry-runs/${dryRunId} until status is 'completed' or 'failed'` };
  }

  private async execute(t: Target, record: DryRunRecord, sources: SourceFile[], options: DryRunOptions): Promise<void> {
    const assemblyId = `dry-run~${record.view.dryRunId}`;
    try {
      const compiled = await this.compiler.compile(sources, t.kind);
      if (!compiled.ok) {
        record.view.diagnostics = compileDiagnostics(compiled);
        return this.failed(record, 'COMPILATION_FAILED', compiled.compilationError);
      }
      const className = chooseClass(t, compiled.discovered, options.className);
      this.transient.hold(t.tenantId, assemblyId, Buffer.from(compiled.assembly, 'base64'));
      record.view.status = 'running';
      const limits = { ...this.settings };
      const common = { tenantId: t.tenantId, assemblyId, className, options, limits, progress: record.progress };
      const report: DryRunReport =
        t.kind === 'projection'
          ? await this.projectionRun.run({ ...common, liveVersionId: t.liveVersionId ?? null })
          : await this.reducerRun.run({ ...common, aggregateType: t.target, bound: t.bound ?? null });
      record.view.report = report;
      record.view.status = 'completed';
    } catch (e) {
      if (e instanceof DomainError) return this.failed(record, e.code, e.message);
      if (e instanceof HostCallError) return this.failed(record, e.failure, e.message);
      this.logger.error(`dry run ${record.view.dryRunId} failed: ${e instanceof Error ? e.stack : e}`);
      this.failed(record, 'INTERNAL', 'the dry run failed on an internal error');
    } finally {
      // Unloaded wherever it was loaded (its load context collected), then no executor can fetch it again.
      await this.code.unload(t.tenantId, assemblyId).catch(() => undefined);
      this.transient.release(t.tenantId, assemblyId);
    }
  }

  private failed(record: DryRunRecord, code: string, message: string): void {
    record.view.status = 'failed';
    record.view.error = { code, message };
  }

  /** Finished runs past their keep time (looked at on each request: no timer). */
  private forgetExpired(): void {
    const now = this.now();
    for (const [id, r] of this.runs) if (r.expiresAt !== undefined && r.expiresAt <= now) this.runs.delete(id);
  }
}

/** The candidate's class: the one asked for, else the only one of the kind (a reducer: the one declaring this type first). */
export function chooseClass(t: Pick<Target, 'kind' | 'target'>, discovered: Discovered[], asked: string | null): string {
  const ofKind = discovered.filter((d) => d.kind === t.kind);
  if (asked) {
    const hit = ofKind.find((d) => d.className === asked);
    if (!hit) throw new DomainError('NO_MATCHING_REDUCER', `no ${t.kind} class '${asked}' in the archive (found: ${names(ofKind)})`);
    return hit.className;
  }
  const fits = t.kind === 'reducer' ? ofKind.filter((d) => d.aggregateType === t.target) : ofKind;
  const pick = fits.length > 0 ? fits : ofKind;
  if (pick.length === 1) return pick[0].className;
  if (pick.length === 0) throw new DomainError('NO_MATCHING_REDUCER', `the archive holds no ${t.kind} implementation`);
  throw new DomainError('NO_MATCHING_REDUCER', `the archive holds several ${t.kind}s (${names(pick)}): name one in className`);
}

const names = (ds: Discovered[]) => ds.map((d) => d.className).join(', ') || 'none';

/** The host's diagnostic in the shared shape (issue 27: file, 1-based line and column, code). */
