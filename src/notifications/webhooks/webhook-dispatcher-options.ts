/** The projection webhooks' delivery settings (AppConfig.webhooks; NotificationsModule provides them). */
export abstract class WebhookDispatcherOptions {
  abstract readonly backoffMs: number[];
  abstract readonly timeoutMs: number;
  abstract readonly pollMs: number;
  abstract readonly concurrency: number;
  /** How often the repair sweep looks for keys whose deliveries wait with no head (default 10 s). */
  abstract readonly repairMs?: number;
}
