import { Injectable } from '@nestjs/common';
import { LaneEngine } from '../lanes/lane-engine';
import { SseStream } from '../notifications/streams/sse-stream';
import { WebSocketStreamServer } from '../notifications/streams/websocket-stream';
import { RuntimePool } from '../tenant-code/runtime-pool';
import { TenantDirectory } from '../tenancy/tenant-directory';
import { TenantPresence } from './tenant-presence.port';

/** This instance's hold on a tenant: its cached keys, open streams, lane routers and loaded assemblies. */
@Injectable()
export class ServiceTenantPresence implements TenantPresence {
  constructor(
    private readonly directory: TenantDirectory,
    private readonly lanes: LaneEngine,
    private readonly runtime: RuntimePool,
    private readonly ws: WebSocketStreamServer,
    private readonly sse: SseStream,
  ) {}

  async stop(tenantId: string): Promise<void> {
    this.directory.forgetTenant(tenantId);
    this.sse.closeTenant(tenantId);
    await this.ws.closeTenant(tenantId);
  }

  async forgetWork(tenantId: string, versionIds: string[]): Promise<void> {
    for (const v of versionIds) await this.lanes.retire(tenantId, v);
    for (const a of this.runtime.loadedAssemblies(tenantId)) await this.runtime.unload(tenantId, a).catch(() => undefined);
  }
}
