import { unscopedTenantTables } from './tenant-sql';

// The checker of test/store/tenant-scoped-sql.int-spec.ts: it must pass what filters on the tenant and catch what does not.
const TENANT = new Set(['events', 'lanes', 'lane_inbox', 'projections', 'webhook_deliveries', 'streams']);
const tables = (sql: string) => unscopedTenantTables(sql, TENANT).map((u) => u.table);

describe('unscopedTenantTables', () => {
  it.each([
    'SELECT position FROM tenant_heads WHERE tenant_id = ?',
    'SELECT * FROM events WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT 100',
    'INSERT INTO events (tenant_id, position, data) VALUES (?, ?, ?) ON CONFLICT (tenant_id, position) DO NOTHING',
    'UPDATE lanes SET applied_position = ? WHERE tenant_id = ? AND version_id = ? AND state_key = ?',
    'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND position <= ?',
    'SELECT l.state_key FROM lanes l JOIN lane_inbox i ON i.tenant_id = l.tenant_id AND i.version_id = l.version_id WHERE l.tenant_id = ?',
    'SELECT 1 FROM lanes JOIN lane_inbox USING (tenant_id, version_id, state_key) WHERE lanes.tenant_id = ?',
    `SELECT * FROM lanes l WHERE l.tenant_id = ? AND EXISTS (SELECT 1 FROM projections p WHERE p.tenant_id = l.tenant_id AND p.active_version = l.version_id)`,
    `INSERT INTO lane_inbox (tenant_id, version_id, state_key, position) SELECT tenant_id, ?, ?, position FROM events WHERE tenant_id = ? AND position > ?`,
    `WITH due AS (SELECT sequence FROM webhook_deliveries WHERE tenant_id = ? AND status = 'waiting') UPDATE webhook_deliveries SET status = 'x' WHERE tenant_id = ? AND sequence IN (SELECT sequence FROM due)`,
    "SELECT * FROM events WHERE tenant_id = ? AND data = 'FROM lanes WHERE x'",
    'SELECT name FROM tenants',
    'UPDATE tenant_heads SET position = position + 1 WHERE tenant_id = ANY($1)',
    'SELECT * FROM lanes l WHERE ? = l.tenant_id',
  ])('passes %s', (sql) => expect(tables(sql)).toEqual([]));

  it.each([
    ['SELECT * FROM events WHERE position > ?', ['events']],
    // tenant_id selected, not filtered: a scan of every tenant.
    ["SELECT tenant_id, projection_id FROM webhook_deliveries WHERE status = 'waiting'", ['webhook_deliveries']],
    ['UPDATE lanes SET lease_owner = NULL WHERE lease_until < ?', ['lanes']],
    ['DELETE FROM lane_inbox WHERE version_id = ?', ['lane_inbox']],
    // Two tenant tables, one bare tenant_id: which one it filters is not known.
    ['SELECT * FROM lanes l JOIN lane_inbox i ON i.version_id = l.version_id WHERE tenant_id = ?', ['lanes', 'lane_inbox']],
    ['SELECT * FROM lanes l, lane_inbox i WHERE l.tenant_id = ? AND i.version_id = l.version_id', ['lane_inbox']],
    ['SELECT * FROM lanes WHERE tenant_id = ? AND version_id IN (SELECT active_version FROM projections)', ['projections']],
    ['INSERT INTO lane_inbox (version_id, state_key) SELECT version_id, state_key FROM lanes WHERE tenant_id = ?', ['lane_inbox']],
    ['SELECT 1 FROM events WHERE tenant_id = ? UNION ALL SELECT 1 FROM streams', ['streams']],
    // Joined on tenant_id, but no tenant named: every tenant's rows.
    ['SELECT * FROM lanes l JOIN lane_inbox i ON i.tenant_id = l.tenant_id AND i.version_id = l.version_id', ['lanes, lane_inbox']],
    ['SELECT * FROM lanes l WHERE l.tenant_id = l.tenant_id', ['lanes']],
  ])('catches %s', (sql, expected) => expect(tables(sql).sort()).toEqual([...expected].sort()));
});
