import { spawnSync } from 'node:child_process';
import { Contract, pathShape } from './contract-endpoints';

type Json = Record<string, any>;

/**
 * Validates an OpenAPI document with @seriousme/openapi-schema-validator (the OpenAPI 3.1 schema,
 * $refs resolved). The package is ESM only: it runs in a Node child process, outside jest's loader.
 */
export function validateOpenApi(text: string): { valid: boolean; errors?: unknown; version?: string } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    const chunks = [];
    for await (const c of process.stdin) chunks.push(c);
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { input: text, cwd: process.cwd(), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the validator did not run: ${run.stderr}`);
  return JSON.parse(run.stdout) as { valid: boolean; errors?: unknown; version?: string };
}

/** The document's operation for a contract path (parameter names aside: `{uploadId}` is `{id}`). */
export function operationOf(doc: Json, method: string, path: string): Json | undefined {
  const key = Object.keys(doc.paths).find((p) => pathShape(p) === pathShape(path));
  return key ? doc.paths[key][method.toLowerCase()] : undefined;
}

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  if (!schema?.$ref) return schema;
  const name = (schema.$ref as string).replace('#/components/schemas/', '');
  return resolve(doc, doc.components.schemas[name]);
}

/** The property sets a response body may have: one per oneOf/anyOf branch; allOf's parts together. */
function propertySets(doc: Json, schema: Json | undefined): Set<string>[] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const branches = [...(s.oneOf ?? []), ...(s.anyOf ?? [])] as Json[];
  if (branches.length) return branches.flatMap((b) => propertySets(doc, b));
  const own = new Set(Object.keys(s.properties ?? {}));
  for (const part of (s.allOf ?? []) as Json[]) for (const set of propertySets(doc, part)) set.forEach((p) => own.add(p));
  return [own];
}

/**
 * The error codes a response names in its own schema (`properties.error.enum`), not through the
 * generic Error shape (which lists every code and so would prove nothing).
 */
function namedCodes(schema: Json | undefined): string[] {
  if (!schema || schema.$ref) return [];
  const own = (schema.properties?.error?.enum ?? []) as string[];
  const parts = [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])] as Json[];
  return [...own, ...parts.flatMap(namedCodes)];
}

const jsonSchemaOf = (response: Json | undefined): Json | undefined => response?.content?.['application/json']?.schema;

/** Everything the contract names that the document lacks, one line each (empty: the document covers the contract). */
export function contractProblems(doc: Json, contract: Contract): string[] {
  const problems: string[] = [];
  const fieldsMissing = (where: string, response: Json | undefined, fields: string[]) => {
    const sets = propertySets(doc, jsonSchemaOf(response));
    if (!sets.some((set) => fields.every((f) => set.has(f)))) {
      const best = sets.map((set) => fields.filter((f) => !set.has(f)).join(', ')).join(' | ') || 'no JSON body';
      problems.push(`${where}: the response has no shape with ${fields.join(', ')} (missing: ${best})`);
    }
  };
  for (const e of contract.endpoints) {
    const op = operationOf(doc, e.method, e.path);
    const name = `${e.method} ${e.path}`;
    if (!op) {
      problems.push(`${name}: not in the document`);
      continue;
    }
    for (const status of e.statuses) if (!op.responses?.[status]) problems.push(`${name}: no ${status} response`);
    for (const { status, code } of e.codes) {
      if (!namedCodes(jsonSchemaOf(op.responses?.[status])).includes(code))
        problems.push(`${name}: its ${status} response does not name ${code}`);
    }
    for (const [status, fields] of Object.entries(e.fields)) fieldsMissing(`${name} ${status}`, op.responses?.[status], fields);
  }
  for (const m of contract.mentions)
    if (!operationOf(doc, m.method, m.path)) problems.push(`${m.method} ${m.path} (mentioned): not in the document`);
  for (const shape of [...contract.earlierShapes, ...contract.resourceShapes]) {
    const op = operationOf(doc, shape.method, shape.path);
    const success = op && Object.keys(op.responses).find((s) => /^2\d\d$/.test(s));
    if (!op || !success) problems.push(`${shape.method} ${shape.path}: no success response`);
    else fieldsMissing(`${shape.method} ${shape.path} ${success}`, op.responses[success], shape.fields);
  }
  for (const { status, code } of contract.errors) {
    const named = Object.values(doc.paths as Json).some((ops) =>
      Object.values(ops as Json).some((op) => namedCodes(jsonSchemaOf((op as Json).responses?.[status])).includes(code)),
    );
    if (!named) problems.push(`error ${status} ${code}: no operation answers it`);
  }
  return problems;
}
