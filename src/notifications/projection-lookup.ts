import { ProjectionRecord } from '../store/projection-repository.port';

/** The tenant's projection by id; throws NOT_FOUND (`projection '<id>' not found`) when it has none. */
export interface ProjectionLookup {
  projection(tenantId: string, projectionId: string): Promise<ProjectionRecord>;
}
