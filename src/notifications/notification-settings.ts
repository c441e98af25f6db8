import { ProjectionConfig } from '../projections/projection-catalog';

/** What a projection's notifications do, stored with the projection (`notify_config`). */
export interface NotificationSettings {
  webhookUrl: string | null;
  /** Own secret (true) or the tenant's shared one. */
  isolated: boolean;
  sse: boolean;
}

export function settingsFromConfig(c: ProjectionConfig | null | undefined): NotificationSettings {
  const w = c?.notifications.webhook;
  return { webhookUrl: w?.url ?? null, isolated: w?.url ? w.isolateSecret === true : false, sse: c?.notifications.sse === true };
}

export function parseSettings(text: string | null): NotificationSettings {
  if (!text) return { webhookUrl: null, isolated: false, sse: false };
  const v = JSON.parse(text) as Partial<NotificationSettings>;
  return { webhookUrl: v.webhookUrl ?? null, isolated: v.isolated === true, sse: v.sse === true };
}
