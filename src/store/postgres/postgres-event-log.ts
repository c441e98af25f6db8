import { Pool, PoolClient } from 'pg';
import { MonotonicClock, planAppends, streamKey, tenantsOf } from '../append-plan';
import { AppendOutcome, AppendRequest, EventLog, StoredEvent, StreamInfo } from '../event-log.port';
import { EVENT_COLUMNS, EventDbRow, toStoredEvent } from '../event-row';
import type { InflightWrites } from './postgres-store';

// Named statements: parsed once per connection, then only bound and executed.
const Q = {
  lockHeads: {
    name: 'es_lock_heads',
    text: 'SELECT tenant_id, position FROM tenant_heads WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id FOR UPDATE',
  },
  streams: {
    name: 'es_streams',
    text: `SELECT s.tenant_id, s.aggregate_id, s.aggregate_type, s.version
           FROM streams s JOIN unnest($1::text[], $2::text[]) AS k(t, a) ON s.tenant_id = k.t AND s.aggregate_id = k.a`,
  },
  insertEvents: {
    name: 'es_insert_events',
    text: `INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type,
             data, metadata, correlation_id, causation_id, created_at)
           SELECT t, p, a, v, id::uuid, at, et, d, m, c, ca, to_timestamp(ts / 1000.0)
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[],
                       $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])
                AS x(t, p, a, v, id, at, et, d, m, c, ca, ts)`,
  },
  upsertStreams: {
    name: 'es_upsert_streams',
    text: `INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
           ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = EXCLUDED.version`,
  },
  upsertHeads: {
    name: 'es_upsert_heads',
    text: `INSERT INTO tenant_heads (tenant_id, position) SELECT * FROM unnest($1::text[], $2::bigint[])
           ON CONFLICT (tenant_id) DO UPDATE SET position = EXCLUDED.position`,
  },
};

export class PostgresEventLog implements EventLog {
  private readonly clock = new MonotonicClock();

  constructor(
    private readonly pool: Pool,
    private readonly inflight: InflightWrites,
    private readonly beforeCommit?: (tenantIds: string[]) => Promise<void>,
  ) {}

  appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    return this.inflight.run(async () => {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        const outcomes = await this.appendInTransaction(client, requests);
        await client.query('COMMIT');
        return outcomes;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    });
  }

  private async appendInTransaction(client: PoolClient, requests: AppendRequest[]): Promise<AppendOutcome[]> {
    const tenants = tenantsOf(requests);
    const headRows = await client.query<{ tenant_id: string; position: number }>({ ...Q.lockHeads, values: [tenants] });
    const heads = new Map<string, number>(tenants.map((t) => [t, 0]));
    for (const r of headRows.rows) heads.set(r.tenant_id, Number(r.position));

    const seen = new Set<string>();
    const ts: string[] = [];
    const as: string[] = [];
    for (const r of requests) {
      const key = streamKey(r.tenantId, r.aggregateId);
      if (seen.has(key)) continue;
      seen.add(key);
      ts.push(r.tenantId);
      as.push(r.aggregateId);
    }
    const streamRows = await client.query<{ tenant_id: string; aggregate_id: string; aggregate_type: string; version: number }>(
      { ...Q.streams, values: [ts, as] },
    );
    const current = new Map<string, StreamInfo>();
    for (const s of streamRows.rows) {
      current.set(streamKey(s.tenant_id, s.aggregate_id), { aggregateType: s.aggregate_type, version: Number(s.version) });
    }

    const plan = planAppends(requests, current, heads, this.clock.now());
    if (plan.rows.length > 0) {
      const cols: unknown[][] = Array.from({ length: 12 }, () => new Array(plan.rows.length));
      plan.rows.forEach((e, i) => {
        cols[0][i] = e.tenantId;
        cols[1][i] = e.position;
        cols[2][i] = e.aggregateId;
        cols[3][i] = e.version;
        cols[4][i] = e.eventId;
        cols[5][i] = e.aggregateType;
        cols[6][i] = e.eventType;
        cols[7][i] = e.data;
        cols[8][i] = e.metadata;
        cols[9][i] = e.correlationId;
        cols[10][i] = e.causationId;
        cols[11][i] = e.timestamp;
      });
      await client.query({ ...Q.insertEvents, values: cols });
      const s = plan.streams;
      await client.query({
        ...Q.upsertStreams,
        values: [s.map((x) => x.tenantId), s.map((x) => x.aggregateId), s.map((x) => x.aggregateType), s.map((x) => x.version)],
      });
      await client.query({ ...Q.upsertHeads, values: [[...plan.heads.keys()], [...plan.heads.values()]] });
    }
    if (this.beforeCommit) await this.beforeCommit(tenants);
    return plan.outcomes;
  }

  async readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventDbRow>({
      name: 'es_read_stream',
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND aggregate_id = $2 AND version >= $3 ORDER BY version LIMIT $4`,
      values: [tenantId, aggregateId, fromVersion, limit],
    });
    return rows.map(toStoredEvent);
  }

  async readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventDbRow>({
      name: 'es_read_all',
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT $3`,
      values: [tenantId, afterPosition, limit],
    });
    return rows.map(toStoredEvent);
  }

  async streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null> {
    const { rows } = await this.pool.query<{ aggregate_type: string; version: number }>({
      name: 'es_stream_info',
      text: 'SELECT aggregate_type, version FROM streams WHERE tenant_id = $1 AND aggregate_id = $2',
      values: [tenantId, aggregateId],
    });
    return rows[0] ? { aggregateType: rows[0].aggregate_type, version: Number(rows[0].version) } : null;
  }

  async headPosition(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ position: number }>({
      name: 'es_head',
      text: 'SELECT position FROM tenant_heads WHERE tenant_id = $1',
      values: [tenantId],
    });
    return rows[0] ? Number(rows[0].position) : 0;
  }
}
