import { MemoryLaneWorld } from '../support/memory-lane-world';
import { describeLaneDeletion } from './lane-deletion.conformance';
import { describeProjectionStore } from './projection-store.conformance';

/**
 * The in-memory lane roles (src/store/lanes/memory) against the suite the SQLite and PostgreSQL
 * lane roles pass, each test on a fresh world (the lanes with the catalog and log they read).
 */
describe('memory lanes', () => {
  let world: MemoryLaneWorld;
  beforeEach(() => {
    world = new MemoryLaneWorld();
  });
  describeProjectionStore(() => world);
  describeLaneDeletion(() => world);
});
