import { Type } from '@nestjs/common';
import { ErrorCode } from '../common/domain-error';
import { statusOf } from '../common/error-http-mapping';
import { OperationSpec, ResponseSpec, TAGS } from '../common/api-docs';
import { integer, JsonSchema, string } from '../common/json-schema';
import { dtoClosure, dtoSchema, SCHEMA_REF_PREFIX } from './dto-schemas';
import { NAMED_SCHEMAS } from './response-schemas';
import { RouteInfo } from './route-catalog';

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
  [field: string]: unknown;
};

export const SECURITY_SCHEMES = {
  ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: "the tenant's API key (esk_…)" },
  ApiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'apiKey',
    description: 'the API key in the query: only on the stream path (browsers cannot set headers on EventSource/WebSocket)',
  },
  AdminToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <ADMIN_TOKEN> (the admin API)' },
};

const ref = (name: string): JsonSchema => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });
/** A shape response-schemas.ts names is referred to by its name; any other is written in place. */
const NAME_OF_SCHEMA = new Map<JsonSchema, string>(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [schema, name]));
if (NAME_OF_SCHEMA.size !== Object.keys(NAMED_SCHEMAS).length) throw new Error('response-schemas.ts gives one schema two names');
const schemaOf = (s: JsonSchema): JsonSchema => {
  const name = NAME_OF_SCHEMA.get(s);
  return name ? ref(name) : s;
};
const isJson = (contentType: string) => contentType === 'application/json';

/** The errors every route of a kind may answer, from what the route is (its auth, body, parameters, quota). */
function sharedErrors(route: RouteInfo, spec: OperationSpec): ErrorCode[] {
  const codes: ErrorCode[] = ['SERVICE_UNAVAILABLE'];
  const auth = route.options.auth ?? 'key';
  if (auth === 'key') codes.push('UNAUTHORIZED');
  if (auth === 'key' && route.options.scope) codes.push('FORBIDDEN');
  if (auth === 'admin') codes.push('UNAUTHORIZED', 'ADMIN_DISABLED');
  if (route.bodyDto || (spec.body && isJson(spec.body.contentType))) {
    codes.push('VALIDATION_FAILED', 'MALFORMED_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST_TIMEOUT');
  } else if (spec.body) codes.push('REQUEST_TIMEOUT');
  if (route.pathParameters.length) codes.push('VALIDATION_FAILED', 'URI_TOO_LONG');
  if (route.queryParameters.length || route.wholeQuery) codes.push('VALIDATION_FAILED');
  if (route.options.quota === 'append' || route.options.quota === 'append-batch') codes.push('RATE_LIMITED', 'QUOTA_EXCEEDED');
  if (route.options.quota === 'upload') codes.push('RATE_LIMITED', 'TOO_MANY_PENDING_UPLOADS');
  return codes;
}

function security(route: RouteInfo): JsonSchema[] {
  switch (route.options.auth ?? 'key') {
    case 'public':
      return [];
    case 'admin':
      return [{ AdminToken: [] }];
    case 'key': {
      // OpenAPI 3.1 lets a non-OAuth scheme name the roles it needs: here the key's scope (@RequiresScope).
      const scopes = route.options.scope ? [route.options.scope] : [];
      return route.options.keyInQuery ? [{ ApiKey: scopes }, { ApiKeyQuery: scopes }] : [{ ApiKey: scopes }];
    }
  }
}

function parameters(route: RouteInfo, spec: OperationSpec, problems: string[]): JsonSchema[] {
  const docs = spec.parameters ?? {};
  const described = (name: string) => (docs[name]?.description ? { description: docs[name].description } : {});
  const out: JsonSchema[] = route.pathParameters.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: string(),
    ...described(name),
  }));
  for (const q of route.queryParameters) {
    const schema = q.integer
      ? integer({
          minimum: q.integer.min,
          maximum: q.integer.max,
          ...(q.integer.default !== undefined ? { default: q.integer.default } : {}),
        })
      : (docs[q.name]?.schema ?? string());
    out.push({ name: q.name, in: 'query', required: false, schema, ...described(q.name) });
  }
  const named = new Set([...route.pathParameters, ...route.queryParameters.map((q) => q.name), ...route.headerParameters]);
  const rest = Object.keys(docs).filter((n) => !named.has(n));
  if (route.wholeQuery) {
    if (!rest.length) problems.push(`${route.handler}: its query goes through a pipe; name its parameters in its @ApiOperation`);
    for (const name of rest) out.push({ name, in: 'query', required: false, schema: docs[name].schema ?? string(), ...described(name) });
  } else if (rest.length) problems.push(`${route.handler}: its @ApiOperation describes parameters it does not read: ${rest.join(', ')}`);
  for (const name of route.headerParameters) {
    // OpenAPI ignores a parameter named Accept; the operation's responses say what it answers.
    if (name.toLowerCase() !== 'accept')
      out.push({ name, in: 'header', required: false, schema: docs[name]?.schema ?? string(), ...described(name) });
  }
  return out;
}

function response(r: ResponseSpec): JsonSchema {
  return {
    description: r.description,
    ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: schemaOf(r.schema) } } } : {}),
  };
}

/** The error body, narrowed to the codes this status carries here. */
const errorSchema = (codes: ErrorCode[]): JsonSchema => ({ allOf: [ref('Error'), { properties: { error: { enum: codes } } }] });

function errorResponse(codes: ErrorCode[]): JsonSchema {
  return { description: codes.join(', '), content: { 'application/json': { schema: errorSchema(codes) } } };
}

function operation(route: RouteInfo, spec: OperationSpec, dtos: Map<string, Type<object>>, problems: string[]): JsonSchema {
  if (!spec.responses[route.successStatus])
    problems.push(`${route.handler}: answers ${route.successStatus}, which its @ApiOperation does not describe`);
  const responses: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(spec.responses)) responses[status] = response(r);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...(spec.errors ?? []), ...sharedErrors(route, spec)])) {
    byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const own = responses[status];
    if (!own) responses[status] = errorResponse(codes);
    else {
      // A status the operation also answers with its own shape (503 of /health/ready): either body.
      const ownSchema = (own.content as Record<string, { schema: JsonSchema }> | undefined)?.['application/json']?.schema;
      responses[status] = {
        description: `${own.description as string}; or an error: ${codes.join(', ')}`,
        content: { 'application/json': { schema: { anyOf: [ownSchema ?? {}, errorSchema(codes)] } } },
      };
    }
  }
  let requestBody: JsonSchema | undefined;
  if (route.bodyDto) {
    dtoClosure(route.bodyDto, dtos);
    if (spec.body)
      problems.push(`${route.handler}: its body is the DTO ${route.bodyDto.name}; its @ApiOperation must not describe it again`);
    requestBody = { required: true, content: { 'application/json': { schema: ref(route.bodyDto.name) } } };
  } else if (route.otherBody) {
    if (!spec.body) problems.push(`${route.handler}: reads a body without a DTO; describe it in its @ApiOperation`);
    else
      requestBody = {
        required: true,
        ...(spec.body.description ? { description: spec.body.description } : {}),
        content: { [spec.body.contentType]: { schema: schemaOf(spec.body.schema) } },
      };
  } else if (spec.body) problems.push(`${route.handler}: reads no body, but its @ApiOperation describes one`);
  return {
    operationId: route.handler.replace('.', '_'),
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description || spec.onlyWhen
      ? { description: [spec.description, spec.onlyWhen && `Only when ${spec.onlyWhen}.`].filter(Boolean).join('\n\n') }
      : {}),
    security: security(route),
    parameters: parameters(route, spec, problems),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the routes Nest registered, with the words and shapes each handler's
 * @ApiOperation gives. Throws, naming every mismatch (a route without one, a success status or a
 * body it does not describe), when they disagree: caught by the unit and e2e tests rather than
 * served half true.
 */
export function buildOpenApiDocument(routes: RouteInfo[], version: string): OpenApiDocument {
  const problems: string[] = [];
  const paths: OpenApiDocument['paths'] = {};
  const dtos = new Map<string, Type<object>>();
  const seen = new Set<string>();
  // Paths in the order of the tags (events first, admin last), the routes' own order within one.
  const keyOf = (r: RouteInfo) => `${r.method.toUpperCase()} ${r.path}`;
  const tagOrder = Object.keys(TAGS);
  const rank = (r: RouteInfo) => tagOrder.indexOf(r.operation?.tag ?? 'admin');
  for (const route of [...routes].sort((a, b) => rank(a) - rank(b))) {
    const key = keyOf(route);
    if (seen.has(key)) problems.push(`${key}: registered twice`);
    seen.add(key);
    if (!route.operation) {
      problems.push(`${key} (${route.handler}): no @ApiOperation on its handler`);
      continue;
    }
    (paths[route.path] ??= {})[route.method] = operation(route, route.operation, dtos, problems);
  }
  if (problems.length) throw new Error(`the OpenAPI document does not match the routes:\n- ${problems.join('\n- ')}`);
  const schemas: Record<string, JsonSchema> = { ...NAMED_SCHEMAS };
  for (const [name, dto] of [...dtos].sort(([a], [b]) => a.localeCompare(b))) {
    if (schemas[name]) throw new Error(`the DTO ${name} has the name of a response shape`);
    schemas[name] = dtoSchema(dto);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Event store service',
      version,
      description:
        'A multi-tenant event store with C# reducers and projections. Every error is `{error: CODE, message, …}`; ' +
        'the contract is interface.md, and README.md documents what it leaves open.',
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ ApiKey: [] }],
    paths,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}
