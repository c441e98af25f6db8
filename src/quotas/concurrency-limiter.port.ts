/** One slot taken (or refused) under a key. */
export interface SlotGrant {
  granted: boolean;
  /** Slots held under the key: after this one was taken, or now when refused. */
  held: number;
  /** Gives the slot back; does nothing the second time, or when the slot was refused. */
  release(): void;
}

/**
 * Counted slots by key (streams open, webhook attempts in flight). In-process by default; on
 * Redis when REDIS_URL is set, so the count spans instances (a slot of an instance that died
 * without giving it back expires). Adapters: InProcessConcurrencyLimiter, RedisConcurrencyLimiter
 * (QuotasModule chooses); called by TenantQuotas.
 */
export abstract class ConcurrencyLimiter {
  abstract readonly kind: 'in-process' | 'redis';
  /** Takes one of `limit` slots under `key` (limit > 0). */
  abstract acquire(key: string, limit: number): Promise<SlotGrant>;
  abstract close(): Promise<void>;
}

export const REFUSED_SLOT = (held: number): SlotGrant => ({ granted: false, held, release: () => undefined });
