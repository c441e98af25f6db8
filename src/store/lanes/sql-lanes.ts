import { SqlRunner } from '../sql-runner';
import { Lanes } from './lanes';
import { SqlLaneGauges } from './sql-lane-gauges';
import { SqlLaneHolds } from './sql-lane-holds';
import { SqlLaneInbox } from './sql-lane-inbox';
import { SqlLaneReads } from './sql-lane-reads';
import { SqlLaneRuns } from './sql-lane-runs';
import { SqlLaneSweep } from './sql-lane-sweep';

/**
 * Every lane role over a store's connections. `db`: the lanes' own connections (PostgreSQL: their
 * pool), for leases, holds, sweeps and gauges; `derived`: the same connections committing in the
 * lanes' durability class, for routing and runs' results (see SqlLaneRuns); `reads`: a request's
 * reads (PostgreSQL: the ordinary pool, so a state read never waits for a client of the lanes' pool).
 */
export function sqlLanes(connections: { db: SqlRunner; derived: SqlRunner; reads: SqlRunner }): Lanes {
  const { db, derived, reads } = connections;
  return {
    inbox: new SqlLaneInbox(db, derived),
    runs: new SqlLaneRuns(db, derived),
    holds: new SqlLaneHolds(db),
    reads: new SqlLaneReads(reads),
    sweep: new SqlLaneSweep(db),
    gauges: new SqlLaneGauges(db),
  };
}
