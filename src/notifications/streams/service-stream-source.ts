import { Inject, Injectable } from '@nestjs/common';
import { ProjectionCatalogRepository } from '../../store/projection-catalog.port';
import { STORE, Store } from '../../store/store.port';
import { TenantDirectory } from '../../tenancy/tenant-directory';
import { Notification } from '../log/notification';
import { NotificationReader } from '../log/notification-reader';
import { parseSettings } from '../log/notification-settings';
import { NotificationTail } from './notification-tail';
import { StreamSource } from './stream-source.port';

/** The projection streams' view of the service: keys, projections and the log (through NotificationTail). */
@Injectable()
export class ServiceStreamSource implements StreamSource {
  private readonly projections: Pick<ProjectionCatalogRepository, 'get'>;
  private readonly tail: NotificationTail;

  constructor(
    private readonly tenants: TenantDirectory,
    @Inject(STORE) store: Store,
    private readonly reader: NotificationReader,
  ) {
    this.projections = store.projections;
    this.tail = new NotificationTail((t, p, after, limit) => this.reader.read(t, p, after, limit));
  }

  async authenticate(apiKey: string | undefined) {
    const found = await this.tenants.resolve(apiKey);
    return found ? { tenantId: found.tenant.tenantId, keyHash: found.keyHash, scopes: found.key.scopes } : null;
  }

  watchKey(keyHash: string, onInvalid: () => void): () => void {
    return this.tenants.watchKey(keyHash, onInvalid);
  }

  async projection(tenantId: string, projectionId: string) {
    const p = await this.projections.get(tenantId, projectionId);
    return p ? { sse: parseSettings(p.notifyConfig).sse } : null;
  }

  headSequence(tenantId: string, projectionId: string): Promise<number> {
    return this.reader.headSequence(tenantId, projectionId);
  }

  read(tenantId: string, projectionId: string, afterSequence: number, limit: number): Promise<Notification[]> {
    return this.tail.read(tenantId, projectionId, afterSequence, limit);
  }
}
