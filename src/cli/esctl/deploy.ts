import * as fs from 'node:fs';
import { diagnosticsOf, formatDiagnostic } from './diagnostics';
import { refusal, ServiceClient, ServiceError } from './service-client';
import { collectSources, zipSources } from './source-archive';

export type CodeKind = 'reducer' | 'projection';

/** What a command writes: stdout for results, stderr for diagnostics and progress. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

/** The archive of a source directory: refused before any upload when there is nothing to send. */
export function archiveOf(dir: string): Buffer {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ServiceError(`${dir} is not a directory`);
  const files = collectSources(dir);
  if (files.length === 0) throw new ServiceError(`${dir} holds no .cs file`);
  return zipSources(files);
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `path` until `done` says the record is settled, or the deadline passes. */
async function settle(
  client: ServiceClient,
  path: string,
  done: (r: any) => boolean,
  timeoutMs: number,
  late = "still compiling: see 'esctl status'",
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await client.expect(client.get(path), 200);
    if (done(record)) return record;
    if (Date.now() > deadline) throw new ServiceError(`after ${timeoutMs / 1000} s, ${late}`);
    await pause(250); // a compile takes a second or more: four reads a second is plenty
  }
}

/** Prints every diagnostic in the compiler's shape; the exit code is 1 when any is an error. */
function report(record: any, output: Output): number {
  const diagnostics = diagnosticsOf(record);
  for (const d of diagnostics) output.err(formatDiagnostic(d));
  return record.status === 'failed' || diagnostics.some((d) => (d.severity ?? 'error') === 'error') ? 1 : 0;
}

/**
 * The upload binds its reducers once compiled, a moment after the status says so: wait for that, so
 * that a `state` read right after `deploy` uses this reducer. Another upload binding the type first is
 * said, not failed (the compile succeeded; `esctl status aggregate-type <type>` shows who is bound).
 */
async function awaitBinding(client: ServiceClient, id: string, type: string, timeoutMs: number, output: Output): Promise<void> {
  const deadline = Date.now() + Math.min(timeoutMs, 30_000);
  for (;;) {
    const a = await client.get(`/aggregate-types/${enc(type)}`);
    if (a.status === 200 && a.body.reducerId === id) return output.err(`bound to aggregate type ${type}`);
    if (a.status !== 200 && a.status !== 404) throw refusal(a);
    if (Date.now() > deadline) {
      const other = a.status === 200 ? `bound to ${a.body.reducerId}` : 'not bound yet';
      return output.err(`aggregate type ${type} is ${other}: bind this reducer with PUT /aggregate-types/${type}`);
    }
    await pause(100);
  }
}

export interface DeployOptions {
  /** reducer: the reducerId to give the upload (else the service picks one). */
  id?: string;
  /** projection: a JSON file sent as the `config` part (notification settings, name). */
  configFile?: string;
  timeoutMs: number;
  /** reducer: false uploads with autoBind=false (compiled, not bound: the live binding stays). */
  bind?: boolean;
}

/** Zips the sources, uploads them, waits for the compile and prints its outcome. Exit code 0 when compiled. */
export async function deploy(client: ServiceClient, kind: CodeKind, dir: string, opts: DeployOptions, output: Output): Promise<number> {
  const zip = archiveOf(dir);
  if (kind === 'reducer') {
    const fields: Record<string, string> = {
      ...(opts.id ? { reducerId: opts.id } : {}),
      ...(opts.bind === false ? { autoBind: 'false' } : {}),
    };
    const accepted = await client.expect(client.postArchive('/reducers/upload', zip, fields), 202);
    const id: string = accepted.reducerId;
    output.err(`uploaded reducer ${id}; compiling…`);
    const record = await settle(client, `/reducers/${enc(id)}/status`, (r) => r.status !== 'pending_compilation', opts.timeoutMs);
    if (report(record, output) !== 0) {
      output.err(`reducer ${id}: compilation failed`);
      return 1;
    }
    for (const d of record.discovered ?? []) {
      output.out(`reducer ${id}: ${d.className} (aggregate type ${d.aggregateType ?? '?'})`);
      if (d.aggregateType && opts.bind === false) output.err(`not bound (--no-bind): bind it with PUT /aggregate-types/${d.aggregateType}`);
      else if (d.aggregateType) await awaitBinding(client, id, d.aggregateType, opts.timeoutMs, output);
    }
    return 0;
  }
  const fields: Record<string, string> = {};
  if (opts.configFile) fields.config = fs.readFileSync(opts.configFile, 'utf8');
  const accepted = await client.expect(client.postArchive('/projections/upload', zip, fields), 202);
  const uploadId: string = accepted.uploadId;
  output.err(`uploaded projection version ${uploadId}; compiling…`);
  const record = await settle(
    client,
    `/projections/${enc(uploadId)}/status`,
    (r) => r.status === 'compiled' || r.status === 'failed',
    opts.timeoutMs,
  );
  if (report(record, output) !== 0) {
    output.err(`projection upload ${uploadId}: compilation failed`);
    return 1;
  }
  output.out(
    `projection ${record.projectionId}${record.name ? ` (${record.name})` : ''}: version ${uploadId} ${record.type === 'runtime' ? 'deployed' : 'compiled'}`,
  );
  return 0;
}

/**
 * `POST /reducers/validate` / `POST /projections/validate` (issue 27 item 3): every diagnostic of the
 * archive at once (`{ valid, diagnostics, discovered }`), binding nothing. An older service without
 * the route answers 404: said so instead of failing obscurely.
 */
export async function validate(client: ServiceClient, kind: CodeKind, dir: string, output: Output): Promise<number> {
  const answer = await client.postArchive(`/${kind}s/validate`, archiveOf(dir));
  if (answer.status === 404) throw new ServiceError(`this service does not offer POST /${kind}s/validate (issue 27 item 3)`, 404);
  if (answer.status !== 200) return fail(answer);
  const printed = report(answer.body, output);
  const code = answer.body.valid === false ? 1 : printed;
  output.out(code === 0 ? `valid: ${kind} sources in ${dir}` : `invalid: ${kind} sources in ${dir}`);
  return code;
}

/** What a dry run may be asked (the server's form fields: className, maxEvents, fromPosition, toPosition, keys, sampleKeys). */
export interface DryRunOptions {
  fields: Record<string, string>;
  timeoutMs: number;
}

/**
 * A dry run of candidate sources over the tenant's history (issue 27 item 4): for a projection
 * `POST /projections/{id}/dry-run`, for a reducer `POST /aggregate-types/{type}/dry-run`; the run is
 * polled until done, its report printed as JSON. A failed compile prints its diagnostics. Exit code 1
 * when the compile or the run failed or the candidate failed on any event.
 */
export async function dryRun(
  client: ServiceClient,
  kind: CodeKind,
  target: string,
  dir: string,
  opts: DryRunOptions,
  output: Output,
): Promise<number> {
  const base = kind === 'projection' ? `/projections/${enc(target)}` : `/aggregate-types/${enc(target)}`;
  const answer = await client.postArchive(`${base}/dry-run`, archiveOf(dir), opts.fields);
  if (answer.status === 404) {
    const said = answer.body?.message ?? '';
    throw new ServiceError(`404: no ${kind} '${target}', or this service does not offer POST ${base}/dry-run ${said}`.trim(), 404);
  }
  if (answer.status !== 202) return fail(answer);
  const id: string = answer.body.dryRunId;
  output.err(`dry run ${id} of ${kind} ${target}: compiling and running…`);
  const done = (r: any) => r.status === 'completed' || r.status === 'failed';
  const run = await settle(client, `${base}/dry-runs/${enc(id)}`, done, opts.timeoutMs, `still running: GET ${base}/dry-runs/${id}`);
  if (run.status === 'failed') {
    for (const d of run.diagnostics ?? []) output.err(formatDiagnostic(d));
    output.err(`dry run ${id} failed: ${run.error?.code}: ${run.error?.message}`);
    return 1;
  }
  const r = run.report;
  output.out(JSON.stringify(r, null, 2));
  const k = r.keys;
  output.err(
    `${r.eventsRead} events${r.truncated ? ` (truncated: ${r.truncatedReason})` : ''}; keys: ${k.added} added, ${k.removed} removed, ` +
      `${k.changed} changed, ${k.unchanged} unchanged, ${k.held} held; ${r.failures.length} failing event type(s)`,
  );
  return r.failures.length > 0 ? 1 : 0;
}

function fail(answer: { status: number; body: any }): number {
  const b = answer.body;
  throw new ServiceError(`${answer.status} ${b?.error ?? ''}: ${b?.message ?? JSON.stringify(b)}`, answer.status, b?.error);
}

export const enc = encodeURIComponent;
