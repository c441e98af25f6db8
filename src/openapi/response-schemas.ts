import { ERROR_CODES } from '../common/domain-error';
import { object, string } from '../common/json-schema';
import {
  APPENDED_SCHEMA,
  BATCH_APPENDED_SCHEMA,
  ERASED_SCHEMA,
  EVENT_STREAM_MESSAGE_SCHEMA,
  LOG_PAGE_SCHEMA,
  STORED_EVENTS_PAGE_SCHEMA,
} from '../events/event-views';
import {
  EVENT_WEBHOOK_CREATED_SCHEMA,
  EVENT_WEBHOOK_DELIVERIES_SCHEMA,
  EVENT_WEBHOOK_SCHEMA,
  EVENT_WEBHOOKS_SCHEMA,
} from '../event-webhooks/event-webhook-views';
import { HEALTH_SCHEMA, LIVENESS_SCHEMA, READINESS_SCHEMA } from '../health/readiness';
import { NOTIFICATIONS_PAGE_SCHEMA, STREAM_MESSAGE_SCHEMA } from '../notifications/log/notification';
import { WEBHOOK_STATUS_SCHEMA } from '../notifications/webhooks/webhook-endpoints';
import {
  DELIVERIES_SCHEMA,
  PROJECTION_ROTATED_SCHEMA,
  REPLAYED_SCHEMA,
  RESUMED_SCHEMA,
  TENANT_ROTATED_SCHEMA,
} from '../notifications/webhooks/webhook-views';
import { ADMIN_LANES_SCHEMA } from '../projections/admin-lanes-view';
import { LANE_OPERATION_RESULT_SCHEMA } from '../projections/lane-operations';
import { PROJECTION_UPLOAD_ANSWER_SCHEMA } from '../projections/projection-catalog';
import {
  CATCHING_UP_SCHEMA,
  KEYS_PAGE_SCHEMA,
  LANES_PAGE_SCHEMA,
  PROJECTION_LIST_SCHEMA,
  PROJECTION_STATE_SCHEMA,
  PROJECTION_STATUS_SCHEMA,
} from '../projections/projection-views';
import { LIMIT_OVERRIDES_SCHEMA } from '../config/quota-policy';
import { TENANT_LIMITS_VIEW_SCHEMA } from '../quotas/tenant-limits';
import {
  AGGREGATE_STATE_SCHEMA,
  BINDING_SCHEMA,
  BOUND_SCHEMA,
  REDUCER_RECORD_SCHEMA,
  REDUCER_UPLOAD_ANSWER_SCHEMA,
} from '../reducers/reducer-views';
import { CREATE_KEY_BODY_SCHEMA, ISSUE_KEY_BODY_SCHEMA, KEY_CREATED_SCHEMA, KEYS_SCHEMA } from '../tenancy/key-spec';
import {
  CREATE_TENANT_BODY_SCHEMA,
  WHOAMI_SCHEMA,
  ISSUED_KEY_SCHEMA,
  TENANT_CREATED_SCHEMA,
  TENANT_SCHEMA,
  TENANTS_SCHEMA,
} from '../tenancy/tenant-views';

/** Every error: `{error: CODE, message, …details}` (common/error-http-mapping.ts). */
const ERROR_SCHEMA = object({ error: { enum: [...ERROR_CODES] }, message: string() }, {}, { additionalProperties: true });

/**
 * The document's named shapes (components.schemas), each written beside the code that builds it;
 * the request DTOs' schemas are added from the classes themselves (dto-schemas.ts).
 */
export const NAMED_SCHEMAS = {
  Error: ERROR_SCHEMA,
  Appended: APPENDED_SCHEMA,
  BatchAppended: BATCH_APPENDED_SCHEMA,
  StoredEventsPage: STORED_EVENTS_PAGE_SCHEMA,
  LogPage: LOG_PAGE_SCHEMA,
  EventStreamMessage: EVENT_STREAM_MESSAGE_SCHEMA,
  Erased: ERASED_SCHEMA,
  ReducerUploadAnswer: REDUCER_UPLOAD_ANSWER_SCHEMA,
  ReducerRecord: REDUCER_RECORD_SCHEMA,
  Binding: BINDING_SCHEMA,
  Bound: BOUND_SCHEMA,
  AggregateState: AGGREGATE_STATE_SCHEMA,
  ProjectionUploadAnswer: PROJECTION_UPLOAD_ANSWER_SCHEMA,
  ProjectionList: PROJECTION_LIST_SCHEMA,
  ProjectionStatus: PROJECTION_STATUS_SCHEMA,
  ProjectionState: PROJECTION_STATE_SCHEMA,
  CatchingUp: CATCHING_UP_SCHEMA,
  KeysPage: KEYS_PAGE_SCHEMA,
  LanesPage: LANES_PAGE_SCHEMA,
  LaneOperationResult: LANE_OPERATION_RESULT_SCHEMA,
  NotificationsPage: NOTIFICATIONS_PAGE_SCHEMA,
  StreamMessage: STREAM_MESSAGE_SCHEMA,
  ProjectionRotated: PROJECTION_ROTATED_SCHEMA,
  TenantRotated: TENANT_ROTATED_SCHEMA,
  Deliveries: DELIVERIES_SCHEMA,
  Replayed: REPLAYED_SCHEMA,
  WebhookStatus: WEBHOOK_STATUS_SCHEMA,
  Resumed: RESUMED_SCHEMA,
  EventWebhook: EVENT_WEBHOOK_SCHEMA,
  EventWebhookCreated: EVENT_WEBHOOK_CREATED_SCHEMA,
  EventWebhooks: EVENT_WEBHOOKS_SCHEMA,
  EventWebhookDeliveries: EVENT_WEBHOOK_DELIVERIES_SCHEMA,
  Health: HEALTH_SCHEMA,
  Liveness: LIVENESS_SCHEMA,
  Readiness: READINESS_SCHEMA,
  Tenant: TENANT_SCHEMA,
  Tenants: TENANTS_SCHEMA,
  TenantCreated: TENANT_CREATED_SCHEMA,
  CreateTenantBody: CREATE_TENANT_BODY_SCHEMA,
  IssuedKey: ISSUED_KEY_SCHEMA,
  IssueKeyBody: ISSUE_KEY_BODY_SCHEMA,
  Whoami: WHOAMI_SCHEMA,
  CreateKeyBody: CREATE_KEY_BODY_SCHEMA,
  KeyCreated: KEY_CREATED_SCHEMA,
  Keys: KEYS_SCHEMA,
  TenantLimitsView: TENANT_LIMITS_VIEW_SCHEMA,
  LimitOverrides: LIMIT_OVERRIDES_SCHEMA,
  AdminLanes: ADMIN_LANES_SCHEMA,
};
