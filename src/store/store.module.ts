import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LaneGauges } from './lanes/lane-gauges.port';
import { LaneHolds } from './lanes/lane-holds.port';
import { LaneInbox } from './lanes/lane-inbox.port';
import { LaneReads } from './lanes/lane-reads.port';
import { LaneRuns } from './lanes/lane-runs.port';
import { LaneSweep } from './lanes/lane-sweep.port';
import { openStore } from './store.factory';
import { STORE, Store } from './store.port';

@Global()
@Module({
  providers: [
    { provide: STORE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => openStore(config) },
    // lanes: each role under its port, derived from the one store chosen (SQLite or PostgreSQL)
    { provide: LaneInbox, inject: [STORE], useFactory: (s: Store) => s.lanes.inbox },
    { provide: LaneRuns, inject: [STORE], useFactory: (s: Store) => s.lanes.runs },
    { provide: LaneHolds, inject: [STORE], useFactory: (s: Store) => s.lanes.holds },
    { provide: LaneReads, inject: [STORE], useFactory: (s: Store) => s.lanes.reads },
    { provide: LaneSweep, inject: [STORE], useFactory: (s: Store) => s.lanes.sweep },
    { provide: LaneGauges, inject: [STORE], useFactory: (s: Store) => s.lanes.gauges },
  ],
  exports: [
    STORE,
    // lanes
    LaneInbox,
    LaneRuns,
    LaneHolds,
    LaneReads,
    LaneSweep,
    LaneGauges,
  ],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(STORE) private readonly store: Store) {}

  // After the HTTP server has closed (Nest runs shutdown hooks after dispose), so in-flight
  // appends have finished; close() still waits for any write in progress.
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
