import { Injectable } from '@nestjs/common';
import { Diagnostic, DIAGNOSTIC_SCHEMA } from '../../common/diagnostic';
import { DomainError, validationFailed } from '../../common/domain-error';
import { arrayOf, boolean, Infer, object, oneOfStrings, string } from '../../common/json-schema';
import { UploadKind } from '../../store/upload-repository.port';
import { Compiler } from '../compiler.port';
import { HostCallError } from '../host/host-process';
import { CompileResult } from '../host/runtime-protocol';
import { readSourceArchive } from './archive-reader';
import { compileDiagnostics } from './compile-diagnostics';

/** The validate routes' multipart form (the document describes it; readMultipart reads it): the archive only. */
export const VALIDATE_BODY = object({
  file: string({ contentMediaType: 'application/zip', description: 'zip of .cs sources, as for an upload' }),
});

/** POST /reducers/validate, POST /projections/validate: the answer (200 whether valid or not). */
export const VALIDATION_SCHEMA = object({
  valid: boolean({ description: 'true when an upload of this archive would compile and pass the sandbox checks' }),
  diagnostics: arrayOf(DIAGNOSTIC_SCHEMA, {
    description: 'every error and warning at once: compiler and sandbox together, each with file, line and column',
  }),
  discovered: arrayOf(
    object(
      { className: string(), stateTypeName: string(), kind: oneOfStrings(['reducer', 'projection'] as const) },
      { aggregateType: string(), projectionName: string() },
    ),
    { description: 'when valid: the implementations an upload would bind or deploy' },
  ),
});
export type ValidationAnswer = Infer<typeof VALIDATION_SCHEMA>;

/**
 * Compiles and checks an archive exactly as an upload's compile does, and answers every diagnostic
 * at once, storing and binding nothing. It compiles at once on the shared compilers (no queue: the
 * caller waits), so the routes count it against the upload quota, as an upload.
 */
@Injectable()
export class SourceValidator {
  constructor(private readonly compiler: Compiler) {}

  async validate(kind: UploadKind, zip: Buffer | undefined): Promise<ValidationAnswer> {
    if (!zip) throw validationFailed('file', 'a multipart part named "file" holding a zip archive is required');
    const sources = await readSourceArchive(zip);
    let result: CompileResult;
    try {
      result = await this.compiler.compile(sources, kind);
    } catch (e) {
      if (e instanceof HostCallError && e.failure === 'UNAVAILABLE')
        throw new DomainError('RUNTIME_UNAVAILABLE', 'no compiler is available; try again');
      return { valid: false, diagnostics: [compilerFailure(e)], discovered: [] };
    }
    const discovered = result.ok
      ? result.discovered.map((d) => ({
          className: d.className,
          stateTypeName: d.stateTypeName,
          kind: d.kind,
          ...(d.aggregateType ? { aggregateType: d.aggregateType } : {}),
          ...(d.projectionName ? { projectionName: d.projectionName } : {}),
        }))
      : [];
    return { valid: result.ok, diagnostics: compileDiagnostics(result), discovered };
  }
}

/** The archive stopped the compiler (past the deadline, out of memory): an error of this archive, as the upload's compile records it. */
function compilerFailure(e: unknown): Diagnostic {
  const why = e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e);
  const message =
    e instanceof HostCallError && e.failure === 'TIMEOUT'
      ? 'compilation exceeded the deadline and was stopped; code that is very costly to compile cannot be accepted'
      : `the compiler failed on this archive (${why.slice(0, 500)})`;
  return { severity: 'error', code: 'COMPILE_FAILED', message, file: null, line: null, column: null };
}
