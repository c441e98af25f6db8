import { SetMetadata } from '@nestjs/common';
import { ErrorCode } from './domain-error';
import { integer, JsonSchema } from './json-schema';

/**
 * What a route's own metadata cannot say about its operation, written on its handler with
 * @ApiOperation: its words, which shapes its answers take (the schema constants written beside
 * their views; one that src/openapi/response-schemas.ts names becomes a $ref to that name), and
 * which domain errors it may answer (their statuses come from error-http-mapping.ts). Auth,
 * request bodies, integer query parameters and the errors every route of a kind shares come from
 * the route itself (src/openapi/openapi-document.ts). Here in common/ so that every feature's
 * controller may use it; only openapi/ reads it.
 */
export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** application/json unless said. */
  contentType?: string;
}

export interface ParameterSpec {
  description?: string;
  /** For the parameters of a whole-query pipe (the route cannot say their type); a named one is a string otherwise. */
  schema?: JsonSchema;
}

export interface OperationSpec {
  tag: Tag;
  summary: string;
  description?: string;
  responses: Record<number, ResponseSpec>;
  errors?: ErrorCode[];
  parameters?: Record<string, ParameterSpec>;
  /**
   * The route exists only in some configurations (a module that registers its controller only when
   * enabled): the document says which configuration.
   */
  onlyWhen?: string;
  /** A body the route reads without a DTO (multipart uploads, admin bodies checked by their services). */
  body?: { contentType: string; schema: JsonSchema; description?: string };
}

/** The document's tags, in the order its paths are listed. */
export const TAGS = {
  events: 'Append and read events',
  reducers: 'Reducer uploads and bindings; aggregate state',
  projections: 'Projection uploads, status, state and lanes',
  notifications: 'Polling, WebSocket and server-sent events',
  webhooks: 'Webhook secrets, deliveries, suspension',
  'event-webhooks': "Event webhooks: the tenant's log delivered to a URL",
  system: 'Health, identity, this document',
  keys: "The tenant's API keys (scope keys:manage)",
  admin: 'Admin API (ADMIN_TOKEN)',
} as const;
export type Tag = keyof typeof TAGS;

export const API_OPERATION_METADATA = 'eventstore:api-operation';

/** The route's OpenAPI operation: see OperationSpec. The document generator refuses a route without one. */
export const ApiOperation = (spec: OperationSpec): MethodDecorator => SetMetadata(API_OPERATION_METADATA, spec);

export const json = (description: string, schema: JsonSchema): ResponseSpec => ({ description, schema });
export const noContent = (description: string): ResponseSpec => ({ description });

/** The notification cursor's page (the projection's notifications and its webhook deliveries). */
export const NOTIFICATION_PAGE = {
  afterSequence: { description: 'notifications after this sequence (0: from the oldest kept)', schema: integer({ minimum: 0 }) },
  limit: { description: 'at most this many (NOTIFICATIONS_PAGE_DEFAULT, up to NOTIFICATIONS_PAGE_MAX)', schema: integer({ minimum: 1 }) },
};

/** What a reducer or projection upload's archive may be refused for. */
export const ARCHIVE_ERRORS: ErrorCode[] = ['INVALID_ARCHIVE', 'ARCHIVE_TOO_LARGE', 'VALIDATION_FAILED'];
