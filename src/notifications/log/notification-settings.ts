import type { ProjectionConfig } from '../../projections/projection-notification-setup.port';
import type { StoredNotifySettings } from '../../store/projection-catalog.port';

/**
 * What a projection's notifications do, stored with the projection. This file is their one owner:
 * it makes them from the upload's config, writes them for the store and parses what the store
 * gives back; nothing else reads inside the stored text.
 */
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

/** The settings as the store keeps them: the text, and the webhook URL its own queries ask for. */
export function toStoredSettings(s: NotificationSettings): StoredNotifySettings {
  return { notifyConfig: JSON.stringify(s), webhookUrl: s.webhookUrl };
}

/** The stored text (`ProjectionRecord.notifyConfig`) back as settings; null text: none configured. */
export function parseSettings(text: string | null): NotificationSettings {
  if (!text) return { webhookUrl: null, isolated: false, sse: false };
  const v = JSON.parse(text) as Partial<NotificationSettings>;
  return { webhookUrl: v.webhookUrl ?? null, isolated: v.isolated === true, sse: v.sse === true };
}
