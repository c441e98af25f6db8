import { ProjectionRecord, StoredNotifySettings } from '../store/projection-catalog.port';

// The port the projection catalog calls for its notifications part; NotificationsModule binds it
// (the caller owns its port: notifications import this file, not the catalog).

/** What an upload's `config` (either form) asks for; stored with the upload. */
export interface ProjectionConfig {
  /** Names the projection: uploading the same name again is a redeploy. Default: [ProjectionName] or the class name. */
  name?: string;
  notifications: {
    webhook?: { url?: string; isolateSecret?: boolean };
    sse?: boolean;
  };
}

/** The notifications capability's part in an upload and a deploy (NotificationsModule binds it; none in unit setups). */
export abstract class ProjectionNotificationSetup {
  /** At upload: checks the settings (webhook URL), makes secrets; what to keep with the upload and what to answer. */
  abstract prepare(
    tenantId: string,
    config: ProjectionConfig | undefined,
  ): Promise<{ meta: Record<string, unknown>; response?: UploadNotificationsView }>;
  /** The settings as stored with the projection. */
  abstract storedSettings(config: ProjectionConfig | null | undefined): StoredNotifySettings;
  /** After the deploy is stored: binds an isolated secret, starts webhook deliveries. */
  abstract deployed(tenantId: string, projectionId: string, before: ProjectionRecord | null, meta: Record<string, unknown>): Promise<void>;
  /** The webhook endpoint's state (active or suspended, backlog) for the status record; null without a webhook. */
  abstract webhookStatus?(tenantId: string, p: ProjectionRecord): Promise<object | null>;
}

export interface UploadNotificationsView {
  webhook: { enabled: boolean; secret: string | null; isolated: boolean };
  sse: boolean;
}
