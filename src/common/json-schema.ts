/**
 * JSON Schema (2020-12, as OpenAPI 3.1 uses it) written beside the code that builds a response, so
 * that the shape and its maker are read together; src/openapi/ collects them into the document.
 *
 * The builders below also carry the TypeScript type of the value a schema describes (`Infer<typeof
 * X_SCHEMA>`), so a view declared to return it cannot grow or lose a field without its schema
 * (json-schema.spec.ts shows the compiler refusing both). A schema written as a plain literal
 * (`{ enum: [...] }`) describes `unknown` to the compiler: write it with a builder to have it checked.
 */
export type JsonSchema = { [keyword: string]: unknown };

declare const DESCRIBES: unique symbol;
/** A JSON Schema that describes values of type T (a phantom: nothing is added to the schema itself). */
export type Schema<T> = JsonSchema & { readonly [DESCRIBES]?: T };
/** The type of the values a schema describes. */
export type Infer<S> = S extends { readonly [DESCRIBES]?: infer T } ? (unknown extends T ? unknown : T) : unknown;

const typed = <T>(schema: JsonSchema): Schema<T> => schema as Schema<T>;

export const string = (extra: JsonSchema = {}): Schema<string> => typed({ type: 'string', ...extra });
export const integer = (extra: JsonSchema = {}): Schema<number> => typed({ type: 'integer', ...extra });
export const boolean = (extra: JsonSchema = {}): Schema<boolean> => typed({ type: 'boolean', ...extra });
export const constant = <const V extends string | boolean | null>(value: V, extra: JsonSchema = {}): Schema<V> =>
  typed({ const: value, ...extra });
/** One of the given strings (`{ enum: [...] }`). */
export const oneOfStrings = <const V extends readonly string[]>(values: V, extra: JsonSchema = {}): Schema<V[number]> =>
  typed({ enum: values, ...extra });
export const timestamp = (extra: JsonSchema = {}): Schema<string> => typed({ type: 'string', format: 'date-time', ...extra });
/** A JSON value the service stores or returns as given (event data, metadata, state). */
export const anyJson = (extra: JsonSchema = {}): Schema<unknown> => typed({ description: 'any JSON value', ...extra });
/** A JSON object: `object`, so that a view may hand over its exact text (RawJson) as well as a parsed object. */
export const jsonObject = (extra: JsonSchema = {}): Schema<object> => typed({ type: 'object', ...extra });
export const arrayOf = <T>(items: Schema<T>, extra: JsonSchema = {}): Schema<T[]> => typed({ type: 'array', items, ...extra });
export const nullable = <T>(schema: Schema<T>): Schema<T | null> => typed({ anyOf: [schema, { type: 'null' }] });
export const oneOf = <S extends JsonSchema[]>(...schemas: S): Schema<Infer<S[number]>> => typed({ oneOf: schemas });

type Fields = Record<string, JsonSchema>;
type RequiredFields<F extends Fields> = { [K in keyof F]: Infer<F[K]> };
type OptionalFields<F extends Fields> = { [K in keyof F]?: Infer<F[K]> };
type Flat<T> = { [K in keyof T]: T[K] };

/** An object with its required fields and, apart, the ones present only sometimes (the views' conditional spreads). */
export function object<R extends Fields, O extends Fields = Record<never, JsonSchema>>(
  required: R,
  optional: O = {} as O,
  extra: JsonSchema = {},
): Schema<Flat<RequiredFields<R> & OptionalFields<O>>> {
  const names = Object.keys(required);
  return typed({ type: 'object', properties: { ...required, ...optional }, ...(names.length ? { required: names } : {}), ...extra });
}

/** An object schema with more required fields before its own (a message that adds its `type` to a view). */
export function withLeadingFields<F extends Fields, T>(fields: F, base: Schema<T>): Schema<Flat<RequiredFields<F> & T>> {
  return typed({
    ...base,
    properties: { ...fields, ...(base.properties as object) },
    required: [...Object.keys(fields), ...((base.required as string[] | undefined) ?? [])],
  });
}
