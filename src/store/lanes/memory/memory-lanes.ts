import { Lanes } from '../lanes';
import { MemoryLaneGauges, MemoryLaneReads, MemoryLaneSweep } from './memory-lane-reads';
import { MemoryLaneTables } from './memory-lane-tables';
import { MemoryLaneHolds, MemoryLaneInbox, MemoryLaneRuns } from './memory-lane-writes';

/** Every lane role in memory over one set of tables: for unit tests, in place of hand-written fakes. */
export function memoryLanes(tables: MemoryLaneTables = new MemoryLaneTables()): Lanes & { tables: MemoryLaneTables } {
  return {
    tables,
    inbox: new MemoryLaneInbox(tables),
    runs: new MemoryLaneRuns(tables),
    holds: new MemoryLaneHolds(tables),
    reads: new MemoryLaneReads(tables),
    sweep: new MemoryLaneSweep(tables),
    gauges: new MemoryLaneGauges(tables),
  };
}
