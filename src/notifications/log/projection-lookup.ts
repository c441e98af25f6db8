import { notFound } from '../../common/domain-error';
import { ProjectionCatalogRepository, ProjectionRecord } from '../../store/projection-catalog.port';

/** The tenant's projection by id; throws NOT_FOUND (`projection '<id>' not found`) when it has none. */
export interface ProjectionLookup {
  projection(tenantId: string, projectionId: string): Promise<ProjectionRecord>;
}

/**
 * The lookup straight from the store (what ProjectionCatalog.projection does): the notifications
 * module binds it without importing the projections module, which imports this one.
 */
export class StoredProjectionLookup implements ProjectionLookup {
  constructor(private readonly repo: Pick<ProjectionCatalogRepository, 'get'>) {}

  async projection(tenantId: string, projectionId: string): Promise<ProjectionRecord> {
    const p = await this.repo.get(tenantId, projectionId);
    if (!p) throw notFound(`projection '${projectionId}'`);
    return p;
  }
}
