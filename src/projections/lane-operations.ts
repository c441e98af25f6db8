import { Infer, integer, object, oneOfStrings, string } from '../common/json-schema';
import { DomainError, notFound } from '../common/domain-error';
import { ProjectionRecord } from '../store/projection-catalog.port';
import { LaneHolds } from '../store/lanes/lane-holds.port';

export type LaneOperation = 'retry' | 'skip';

export interface LaneOperationDeps {
  projection(tenantId: string, projectionId: string): Promise<ProjectionRecord>;
  lanes: LaneHolds;
  /** The lane runs again at once rather than at the next sweep. */
  wakeLane(lane: { tenantId: string; versionId: string; key: string }): Promise<void>;
}

export const LANE_OPERATION_RESULT_SCHEMA = object({
  projectionId: string(),
  key: string(),
  action: oneOfStrings(['retry', 'skip']),
  position: integer({ description: 'the position the lane was held on' }),
});

export type LaneOperationResult = Infer<typeof LANE_OPERATION_RESULT_SCHEMA>;

const notHeld = (key: string): DomainError => new DomainError('VALIDATION_FAILED', `lane '${key}' is not held`, { field: 'key' });

/**
 * An operator's retry or skip of a held lane. The pending version's lane is the one operated on
 * when it is held there (a redeploy catching up stops on its own failures); otherwise the active one's.
 */
export class LaneOperations {
  constructor(private readonly deps: LaneOperationDeps) {}

  async operate(tenantId: string, projectionId: string, key: string, action: LaneOperation): Promise<LaneOperationResult> {
    const versionId = await this.versionHolding(tenantId, projectionId, key);
    const lane = await this.deps.lanes.getLane({ tenantId, versionId, key });
    if (!lane) throw notFound(`lane '${key}'`);
    if (lane.heldPosition === null) throw notHeld(key);
    const done =
      action === 'retry'
        ? await this.deps.lanes.release({ tenantId, versionId, key })
        : await this.deps.lanes.skip({ tenantId, versionId, key });
    // Released or skipped by someone else between the read and the change: it is no longer held.
    if (!done) throw notHeld(key);
    await this.deps.wakeLane({ tenantId, versionId, key });
    return { projectionId, key, action, position: lane.heldPosition };
  }

  private async versionHolding(tenantId: string, projectionId: string, key: string): Promise<string> {
    const p = await this.deps.projection(tenantId, projectionId);
    const pendingHeld =
      !!p.pendingVersion && (await this.deps.lanes.getLane({ tenantId, versionId: p.pendingVersion, key }))?.heldPosition != null;
    const versionId = pendingHeld ? p.pendingVersion : p.activeVersion;
    if (!versionId) throw notFound(`projection '${projectionId}'`);
    return versionId;
  }
}
