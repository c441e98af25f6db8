/**
 * JSON Schema (2020-12, as OpenAPI 3.1 uses it) written beside the code that builds a response, so
 * that the shape and its maker are read together; src/openapi/ collects them into the document.
 */
export type JsonSchema = { [keyword: string]: unknown };

export const string = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
export const integer = (extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', ...extra });
export const boolean = (extra: JsonSchema = {}): JsonSchema => ({ type: 'boolean', ...extra });
export const constant = (value: string | boolean | null, extra: JsonSchema = {}): JsonSchema => ({ const: value, ...extra });
export const timestamp = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', format: 'date-time', ...extra });
/** A JSON value the service stores or returns as given (event data, metadata, state). */
export const anyJson = (extra: JsonSchema = {}): JsonSchema => ({ description: 'any JSON value', ...extra });
export const jsonObject = (extra: JsonSchema = {}): JsonSchema => ({ type: 'object', ...extra });
export const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
export const oneOf = (...schemas: JsonSchema[]): JsonSchema => ({ oneOf: schemas });

/** An object with its required fields and, apart, the ones present only sometimes (the views' conditional spreads). */
export function object(
  required: Record<string, JsonSchema>,
  optional: Record<string, JsonSchema> = {},
  extra: JsonSchema = {},
): JsonSchema {
  const names = Object.keys(required);
  return { type: 'object', properties: { ...required, ...optional }, ...(names.length ? { required: names } : {}), ...extra };
}
