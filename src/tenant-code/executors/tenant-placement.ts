/**
 * Where a tenant's executor calls go in a shared pool: rendezvous (highest random weight) hashing
 * of the tenant id over the pool's slots. Stable — the same tenant always lands on the same slot
 * while the pool keeps its size, so its assemblies stay loaded where its calls go — and spread:
 * every slot is equally likely, and resizing the pool from n to n+1 moves only ~1/(n+1) of the
 * tenants. No table is kept: an idle tenant costs nothing.
 */
export function rendezvousSlot(tenantId: string, slots: number): number {
  let best = 0;
  let bestScore = -1;
  for (let slot = 0; slot < slots; slot++) {
    const score = hash32(tenantId, slot);
    if (score > bestScore) {
      bestScore = score;
      best = slot;
    }
  }
  return best;
}

/** FNV-1a over the id and the slot, finished with murmur3's mixer (FNV alone spreads close ids poorly). */
function hash32(id: string, slot: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= slot + 0x9e3779b9;
  h = Math.imul(h, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export interface QuarantineOptions {
  /** The first stay. */
  baseMs: number;
  /** Each repeat offence doubles the stay, up to this. */
  maxMs: number;
}

interface Record {
  strikes: number;
  until: number;
  lastOffence: number;
}

/**
 * Tenants whose call killed or hung a shared executor, and until when they run apart. A repeat
 * offender stays longer (doubling up to the cap); a tenant with no offence for twice the cap
 * starts again from the first stay. Only offenders have an entry.
 */
export class QuarantineBook {
  private readonly records = new Map<string, Record>();

  constructor(
    private readonly options: QuarantineOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts an offence; returns when the tenant's quarantine ends. */
  offend(tenantId: string): { until: number; strikes: number } {
    const now = this.now();
    const prior = this.records.get(tenantId);
    const strikes = prior && now - prior.lastOffence <= this.forgetAfterMs ? prior.strikes + 1 : 1;
    const stay = Math.min(this.options.maxMs, this.options.baseMs * 2 ** Math.min(strikes - 1, 40));
    const until = Math.max(prior?.until ?? 0, now + stay);
    this.records.set(tenantId, { strikes, until, lastOffence: now });
    return { until, strikes };
  }

  /** When the tenant's quarantine ends, if it is in one now. */
  quarantinedUntil(tenantId: string): number | undefined {
    const r = this.records.get(tenantId);
    return r && r.until > this.now() ? r.until : undefined;
  }

  /** Forgets offenders whose last offence is long past (called by the pool's sweep). */
  prune(): void {
    const now = this.now();
    for (const [tenantId, r] of this.records) if (now - r.lastOffence > this.forgetAfterMs && r.until <= now) this.records.delete(tenantId);
  }

  get size(): number {
    return this.records.size;
  }

  private get forgetAfterMs(): number {
    return 2 * this.options.maxMs;
  }
}
