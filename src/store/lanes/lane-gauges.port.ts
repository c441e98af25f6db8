import { VersionGauges } from './lane-records';

/** The lanes' figures for the metrics scrape (GET /metrics). Caller: ScrapeGauges. Adapters: SqlLaneGauges, MemoryLaneGauges. */
export abstract class LaneGauges {
  /**
   * Every live (active or pending) version of every tenant with its lag figures and its
   * projection's notification head, in ONE statement: a metrics scrape costs one round trip
   * however many projections there are (it reads the lane and inbox rows once, grouped).
   */
  abstract versionGauges(): Promise<VersionGauges[]>;
}
