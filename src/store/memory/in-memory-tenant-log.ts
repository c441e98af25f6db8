import { AppendRequest, StoredEvent } from '../event-log.port';

/**
 * Tenants' event logs in memory, as far as the event webhooks read them (positions gap-free per
 * tenant, in append order; aggregate versions counted per aggregate). What
 * InMemoryEventWebhookRepository reads; tests append to it as they append to a store's EventLog.
 */
export class InMemoryTenantLog {
  private readonly logs = new Map<string, StoredEvent[]>();
  private readonly versions = new Map<string, number>();

  append(requests: AppendRequest[]): void {
    for (const r of requests) {
      const log = this.logs.get(r.tenantId) ?? [];
      this.logs.set(r.tenantId, log);
      for (const e of r.events) {
        const aggregate = `${r.tenantId}\u0000${r.aggregateId}`;
        const version = (this.versions.get(aggregate) ?? 0) + 1;
        this.versions.set(aggregate, version);
        const position = log.length + 1;
        log.push({
          position,
          eventId: `${r.tenantId}-${position}`,
          aggregateId: r.aggregateId,
          aggregateType: r.aggregateType ?? r.inferredType,
          eventType: e.eventType,
          version,
          timestamp: Date.now(),
          data: e.data,
          metadata: r.metadata ?? null,
          correlationId: r.correlationId ?? null,
          causationId: r.causationId ?? null,
          ...(e.tags && e.tags.length > 0 ? { tags: [...e.tags] } : {}),
        });
      }
    }
  }

  /** The tenant's last position (0 before its first event). */
  head(tenantId: string): number {
    return this.logs.get(tenantId)?.length ?? 0;
  }

  /** Events after `after` up to `atMost`, in position order. */
  between(tenantId: string, after: number, atMost: number): StoredEvent[] {
    return (this.logs.get(tenantId) ?? []).slice(after, atMost);
  }
}
