import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * What the contract (interface.md) names, read from its own text so that a check built on it
 * follows the file: its endpoint headings (`**POST /events**`) with the statuses and error codes
 * their paragraphs and tables name, every `METHOD /path` it mentions anywhere (prose, the earlier
 * shapes table, the channels table), and the rows of its Errors table.
 */
export interface ContractEndpoint {
  method: string;
  path: string;
  statuses: number[];
  /** `404 with code NO_REDUCER_BOUND`, or a status table row whose body is `{error: 'NOT_FOUND'}`. */
  codes: { status: number; code: string }[];
  /** Response fields by status: a `Response 201:` followed by a field table, or by a list (`aggregateId, aggregateType, …`). */
  fields: Record<number, string[]>;
}

/** A row of "Variant response shapes": an operation and the fields of its earlier answer. */
export interface EarlierShape {
  method: string;
  path: string;
  fields: string[];
}

export interface Contract {
  endpoints: ContractEndpoint[];
  mentions: { method: string; path: string }[];
  errors: { status: number; code: string }[];
  earlierShapes: EarlierShape[];
  /** Resources whose heading names the one operation answering them (`### Aggregate state (GET /…/state)`): its 200's fields. */
  resourceShapes: EarlierShape[];
}

/** The repository's copy of the contract, which CI (a clone with no `../shared` beside it) checks against. */
export const CONTRACT_COPY = path.resolve(__dirname, '..', '..', 'docs', 'contract', 'interface.md');

/** The team's contract, `shared/spec/interface.md` beside the repository or any folder above it; null if none there. */
export function findSharedContract(): string | null {
  for (let dir = path.resolve(__dirname, '..', '..'); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(path.dirname(dir), 'shared', 'spec', 'interface.md');
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * The contract file the checks read: INTERFACE_SPEC, else the team's shared file, else the
 * repository's copy (docs/contract/interface.md; a test keeps it equal to the shared file where
 * that exists).
 */
export function findContractFile(): string {
  if (process.env.INTERFACE_SPEC) return process.env.INTERFACE_SPEC;
  const shared = findSharedContract();
  if (shared) return shared;
  if (fs.existsSync(CONTRACT_COPY)) return CONTRACT_COPY;
  throw new Error(
    'the contract interface.md was not found (../shared/spec/interface.md or docs/contract/interface.md); set INTERFACE_SPEC',
  );
}

const METHOD_PATH = /\b(GET|POST|PUT|DELETE|PATCH) (\/[A-Za-z0-9/{}_.-]*)/g;
const HEADING = /^\*\*(GET|POST|PUT|DELETE|PATCH) (\/\S*)\*\*/;

/** The part of the file under a `## title` heading. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`the contract has no '## ${title}' section`);
  const rest = markdown.slice(start + title.length + 5);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

const IDENTIFIER = /^[a-z][A-Za-z]*$/;

/**
 * Field names in a list such as `aggregateId, aggregateType, startVersion (integer), …`: what is
 * quoted, in parentheses or in braces is dropped; after `Response 200:` a single word is a
 * description (`reducer record`), not a field.
 */
function fieldList(text: string, minItems = 2): string[] {
  const plain = text
    .replace(/`[^`]*`/g, ' ')
    .replace(/'[^']*'/g, ' ')
    .replace(/\([^)]*\)/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\.\s*$/, '');
  const firsts = plain.split(',').map((piece) => piece.trim().split(/\s+/)[0] ?? '');
  return firsts.length >= minItems && firsts.every((f) => IDENTIFIER.test(f)) ? firsts : [];
}

/** A markdown table row's cells. */
const cells = (line: string): string[] =>
  line
    .replace(/^\|/, '')
    .replace(/\|\s*$/, '')
    .split('|')
    .map((c) => c.trim());

export function parseContract(markdown: string): Contract {
  const endpoints: ContractEndpoint[] = [];
  const earlierShapes: EarlierShape[] = [];
  let current: ContractEndpoint | undefined;
  let tableStatus: number | undefined;
  let inVariants = false;
  for (const line of section(markdown, 'Endpoints').split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) endpoints.push((current = { method: heading[1], path: heading[2], statuses: [], codes: [], fields: {} }));
    else if (line.startsWith('### ')) {
      current = undefined;
      inVariants = /variant response shapes/i.test(line);
    }
    if (inVariants && line.startsWith('|')) {
      const [operation, shape] = cells(line);
      const op = /^(GET|POST|PUT|DELETE|PATCH) (\/\S*)$/.exec(operation ?? '');
      // "body only reducerId; response aggregateType, …": the fields of the answer are after "response".
      const answer = (shape ?? '')
        .split(/\bresponse\b/)
        .pop()!
        .replace(/^\s*\d{3}\s+is\s+/, '')
        .replace(/\bplus\b/g, ',');
      if (op) earlierShapes.push({ method: op[1], path: op[2], fields: fieldList(answer, 1) });
    }
    if (!current) continue;
    const add = (status: number) => current!.statuses.includes(status) || current!.statuses.push(status);
    if (line.trim() !== '' && !line.startsWith('|')) tableStatus = undefined;
    for (const piece of line.split(/(?=\bResponse \d{3}\b)/)) {
      const m = /^Response (\d{3})\b:?(.*)$/.exec(piece);
      if (!m) continue;
      add(Number(m[1]));
      const list = fieldList(m[2].split(/\.\s/)[0]);
      if (list.length) current.fields[Number(m[1])] = list;
      else if (m[2].trim() === '') tableStatus = Number(m[1]);
    }
    // The field table after `Response 201:` (| eventId | string |).
    if (tableStatus !== undefined && line.startsWith('|')) {
      const name = cells(line)[0];
      if (IDENTIFIER.test(name) && name !== 'Field') (current.fields[tableStatus] ??= []).push(name);
    }
    for (const m of line.matchAll(/\b(\d{3}) with code ([A-Z][A-Z_]+)/g)) {
      add(Number(m[1]));
      current.codes.push({ status: Number(m[1]), code: m[2] });
    }
    // A status table: `| 404 | condition | {error: 'NOT_FOUND'} |`.
    const row = /^\|\s*(\d{3})\s*\|(.*)$/.exec(line);
    if (row) {
      add(Number(row[1]));
      const code = /error:\s*'([A-Z_]+)'/.exec(row[2]);
      if (code) current.codes.push({ status: Number(row[1]), code: code[1] });
    }
  }
  const resourceShapes: EarlierShape[] = [];
  let resource: EarlierShape | undefined;
  for (const line of section(markdown, 'Resources and their fields').split('\n')) {
    if (line.startsWith('### ')) {
      const op = /\((GET|POST|PUT|DELETE|PATCH) (\/[^)\s;]*)\)\s*$/.exec(line);
      resource = op ? { method: op[1], path: op[2], fields: [] } : undefined;
      if (resource) resourceShapes.push(resource);
    } else if (resource && line.startsWith('|')) {
      const name = cells(line)[0];
      if (IDENTIFIER.test(name)) resource.fields.push(name);
    } else if (resource && line.trim()) resource.fields.push(...fieldList(line)); // `tenantId string, name string, …`
  }
  const mentions = [...markdown.matchAll(METHOD_PATH)].map((m) => ({ method: m[1], path: m[2].replace(/[.]$/, '') }));
  const errors = section(markdown, 'Errors')
    .split('\n')
    .map((line) => /^\|\s*(\d{3})\s*\|\s*([A-Z][A-Z_]+)\s*\|/.exec(line))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ status: Number(m[1]), code: m[2] }));
  return { endpoints, mentions, errors, earlierShapes, resourceShapes };
}

/** `/projections/{uploadId}/status` and `/projections/{id}/status` are one path. */
export const pathShape = (p: string): string => p.replace(/\{[^}]+\}/g, '{}');
