import { Injectable, Optional } from '@nestjs/common';
import { DomainError, notFound } from '../common/domain-error';
import { LruMap } from '../common/lru-map';
import { uuidv7 } from '../common/uuid-v7';
import { Binding, BindingRepository } from '../store/reducer-state.port';
import { UploadRepository } from '../store/upload-repository.port';
import { Rebound } from './rebound.port';

const CACHE_MS = 2_000;

/**
 * Which reducer computes an aggregate type now. Lookups are on every append, so they are cached
 * briefly (another instance's rebind is seen within CACHE_MS; this instance's at once).
 */
@Injectable()
export class BindingLookup {
  private readonly cache = new LruMap<string, { binding: Binding | null; until: number }>(10_000);

  constructor(
    private readonly bindings: BindingRepository,
    @Optional() private readonly now: () => number = Date.now,
  ) {}

  async current(tenantId: string, aggregateType: string): Promise<Binding | null> {
    const key = `${tenantId}\u0000${aggregateType}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.binding;
    const binding = await this.bindings.get(tenantId, aggregateType);
    this.cache.set(key, { binding, until: this.now() + CACHE_MS });
    return binding;
  }

  /** This instance bound it: seen at once. */
  remember(binding: Binding): void {
    this.cache.set(`${binding.tenantId}\u0000${binding.aggregateType}`, { binding, until: this.now() + CACHE_MS });
  }
}

/**
 * Binds reducers to aggregate types: checks that the upload compiled and resolves the class;
 * every bind gets a new binding id, which makes earlier snapshots stale.
 */
@Injectable()
export class AggregateBinder {
  constructor(
    private readonly bindings: BindingRepository,
    private readonly uploads: UploadRepository,
    private readonly lookup: BindingLookup,
    private readonly rebound: Rebound,
    @Optional() private readonly now: () => number = Date.now,
  ) {}

  /** The binding in force (the lookup's, cached). */
  current(tenantId: string, aggregateType: string): Promise<Binding | null> {
    return this.lookup.current(tenantId, aggregateType);
  }

  /** GET /aggregate-types: a page of the tenant's bindings in type order after `after`; `next` when more may follow. */
  async list(tenantId: string, after: string, limit: number): Promise<{ bindings: Binding[]; next?: string }> {
    const bindings = await this.bindings.list(tenantId, after, limit);
    return { bindings, ...(bindings.length === limit ? { next: bindings[bindings.length - 1].aggregateType } : {}) };
  }

  async bind(tenantId: string, aggregateType: string, reducerId: string, className?: string): Promise<Binding> {
    const upload = await this.uploads.get(tenantId, reducerId);
    if (!upload || upload.kind !== 'reducer') throw notFound(`reducer '${reducerId}'`);
    if (upload.status !== 'compiled') {
      throw new DomainError(
        'REDUCER_NOT_COMPILED',
        upload.status === 'failed' ? `reducer '${reducerId}' failed to compile` : `reducer '${reducerId}' is still compiling`,
        { reducerId, status: upload.status },
      );
    }
    const reducers = (upload.discovered ?? []).filter((d) => d.kind === 'reducer');
    const matches = className
      ? reducers.filter((d) => d.className === className)
      : reducers.filter((d) => d.aggregateType === aggregateType);
    if (matches.length !== 1) {
      const known = reducers.map((d) => `${d.className} (${d.aggregateType})`).join(', ') || 'none';
      throw new DomainError(
        'NO_MATCHING_REDUCER',
        matches.length === 0
          ? `reducer '${reducerId}' has no ${className ? `class '${className}'` : `implementation for aggregate type '${aggregateType}'`}; it has: ${known}`
          : `reducer '${reducerId}' has several implementations for '${aggregateType}'; name one with className: ${known}`,
        { reducerId },
      );
    }
    const binding: Binding = {
      tenantId,
      aggregateType,
      reducerId,
      className: matches[0].className,
      bindingId: uuidv7(),
      boundAt: this.now(),
    };
    await this.bindings.put(binding);
    this.lookup.remember(binding);
    this.rebound.rebound(binding);
    return binding;
  }
}
