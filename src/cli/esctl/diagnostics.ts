/** One diagnostic as esctl prints it: `file(line,col): severity CODE: message` (the compiler's own shape). */
export interface Diagnostic {
  file?: string | null;
  line?: number;
  column?: number;
  severity?: string;
  code?: string;
  message: string;
  hint?: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file ? `${d.file}(${d.line ?? 0},${d.column ?? 0}): ` : '';
  const code = d.code ? ` ${d.code}` : '';
  const hint = d.hint ? ` (hint: ${d.hint})` : '';
  return `${where}${d.severity ?? 'error'}${code}: ${d.message}${hint}`;
}

/** `file(line,col): error CODE: message` as the host writes it into compilationError. */
const COMPILER_LINE = /^(.+?)\((\d+),(\d+)\): (error|warning|info) ([A-Z]+\d+): (.*)$/;
/** `CODE: message` without a location (the sandbox's ES codes, QUOTA_EXCEEDED, …). */
const CODED_LINE = /^(?:(error|warning) )?([A-Z][A-Z_]*\d*): (.*)$/;

/**
 * The diagnostics of a failed compile. A record with a structured `diagnostics` array (issue 27 items 3
 * and 6, not served yet) is read as is; otherwise the `compilationError` text is split into its lines,
 * each printed in the compiler's shape, and a line that is not a diagnostic is kept as a plain error.
 */
export function diagnosticsOf(record: { diagnostics?: Diagnostic[]; compilationError?: string }): Diagnostic[] {
  if (Array.isArray(record.diagnostics)) return record.diagnostics;
  const text = record.compilationError ?? '';
  const out: Diagnostic[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const c = COMPILER_LINE.exec(line);
    if (c) {
      out.push({ file: c[1], line: Number(c[2]), column: Number(c[3]), severity: c[4], code: c[5], message: c[6] });
      continue;
    }
    const k = CODED_LINE.exec(line);
    if (k) out.push({ severity: k[1] ?? 'error', code: k[2], message: k[3] });
    else out.push({ severity: 'error', message: line });
  }
  return out;
}
