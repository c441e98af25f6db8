import type { Diagnostic } from '../../common/diagnostic';
import type { CompileResult, Diagnostic as HostDiagnostic } from '../host/runtime-protocol';

/** Where the sandbox's refusals are explained (their message already names the API and the reason). */
const REFUSAL_HINTS: Record<string, string> = {
  ES0001:
    'refused by the sandbox allowlist: docs/csharp.md, "What your code may use"; the EventSourcing.Sdk package\'s analyzer shows it in the IDE',
  ES0002: 'refused construct: docs/csharp.md, "static readonly fields and new T()" and "What your types may derive from"',
};

/** A host diagnostic in the service's shape: `file`/`code`, null for an unknown location, the hint apart from the message. */
export function toDiagnostic(d: HostDiagnostic): Diagnostic {
  const suffix = d.hint === undefined ? '' : ` [${d.hint}]`;
  const message = suffix && d.message.endsWith(suffix) ? d.message.slice(0, -suffix.length) : d.message;
  const hint = d.hint ?? REFUSAL_HINTS[d.id];
  const located = d.path !== null;
  return {
    severity: d.severity === 'warning' ? 'warning' : 'error',
    code: d.id,
    message,
    file: d.path,
    line: located ? d.line : null,
    column: located ? d.column : null,
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * Every diagnostic of a compile, errors first, then warnings. A failed compile with none (the archive
 * was refused before compiling: no .cs file, too many files…) has its summary as one error without a location.
 */
export function compileDiagnostics(result: CompileResult): Diagnostic[] {
  const found = (result.diagnostics ?? []).map(toDiagnostic);
  if (!result.ok && !found.some((d) => d.severity === 'error')) {
    found.unshift({ severity: 'error', code: 'COMPILE_FAILED', message: result.compilationError, file: null, line: null, column: null });
  }
  return found;
}
