import { DomainError } from '../common/domain-error';

/**
 * The export file: NDJSON, one JSON object per line.
 *   line 1        header  {format, version, tenantId, exportedAt, schemaVersion, store}
 *   lines 2..n-1  rows    {table, row}: every column, time columns as epoch ms, byte columns base64
 *   line n        trailer {end: true, rows, counts: {table: rows}}
 * A file without its trailer, or whose counts differ from its rows, was cut short and is refused.
 */
export const EXPORT_FORMAT = 'eventstore-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: number;
  tenantId: string;
  exportedAt: string;
  schemaVersion: number;
  store: 'sqlite' | 'postgres';
}

export interface ExportTrailer {
  end: true;
  rows: number;
  counts: Record<string, number>;
}

export const invalid = (line: number, message: string): DomainError =>
  new DomainError('IMPORT_INVALID', `line ${line}: ${message}`, { line });

/** Runs a row's own check (its table's `alongside`, `onImport`); a refusal it makes names the line, as every other does. */
export function atLine<T>(line: number, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof DomainError && e.code === 'IMPORT_INVALID' && e.details.line === undefined)
      throw new DomainError('IMPORT_INVALID', `line ${line}: ${e.message}`, { ...e.details, line });
    throw e;
  }
}

function parse(text: string, line: number): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw invalid(line, 'not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(line, 'not a JSON object');
  return v as Record<string, unknown>;
}

export function parseHeader(text: string | undefined, targetSchemaVersion: number): ExportHeader {
  if (text === undefined) throw new DomainError('IMPORT_TRUNCATED', 'the file is empty: no header', { line: 1 });
  const h = parse(text, 1);
  if (h.format !== EXPORT_FORMAT) throw invalid(1, `not an ${EXPORT_FORMAT} header`);
  if (h.version !== EXPORT_VERSION) throw invalid(1, `format version ${String(h.version)}; this service reads version ${EXPORT_VERSION}`);
  if (typeof h.tenantId !== 'string' || h.tenantId.length === 0 || h.tenantId.length > 200) throw invalid(1, 'tenantId missing');
  if (typeof h.schemaVersion !== 'number' || !Number.isSafeInteger(h.schemaVersion)) throw invalid(1, 'schemaVersion missing');
  if (h.schemaVersion > targetSchemaVersion)
    throw new DomainError(
      'IMPORT_INVALID',
      `the export was made by a newer schema (version ${h.schemaVersion}; this store has ${targetSchemaVersion}): upgrade this service first`,
      { line: 1 },
    );
  return h as unknown as ExportHeader;
}

export type ParsedLine = { kind: 'row'; table: string; row: Record<string, unknown> } | { kind: 'trailer'; trailer: ExportTrailer };

export function parseLine(text: string, line: number): ParsedLine {
  const v = parse(text, line);
  if (v.end === true) {
    if (typeof v.rows !== 'number' || typeof v.counts !== 'object' || v.counts === null) throw invalid(line, 'malformed trailer');
    return { kind: 'trailer', trailer: v as unknown as ExportTrailer };
  }
  if (typeof v.table !== 'string' || typeof v.row !== 'object' || v.row === null || Array.isArray(v.row))
    throw invalid(line, 'neither a row {table, row} nor the trailer');
  return { kind: 'row', table: v.table, row: v.row as Record<string, unknown> };
}

/** The trailer's counts against the rows read: a mismatch means lines were lost. */
export function checkTrailer(trailer: ExportTrailer | undefined, counts: Map<string, number>, rows: number): void {
  if (!trailer) throw new DomainError('IMPORT_TRUNCATED', `the file ends after ${rows} rows without its trailer: it was cut short`);
  const said = Object.entries(trailer.counts).filter(([, n]) => n > 0);
  const read = [...counts.entries()].filter(([, n]) => n > 0);
  const same = trailer.rows === rows && said.length === read.length && said.every(([t, n]) => counts.get(t) === n);
  if (!same)
    throw new DomainError('IMPORT_TRUNCATED', `the trailer counts ${trailer.rows} rows but ${rows} were read: lines are missing`, {
      expected: trailer.counts,
      read: Object.fromEntries(counts),
    });
}
