import { logQuerySql } from './log-query-sql';
import { conditionHitSql } from './event-query-sql';

const build = (q: Parameters<typeof logQuerySql>[1], dialect: 'sqlite' | 'postgres' = 'postgres') => {
  const values: unknown[] = [];
  const sql = logQuerySql('t1', q, (v) => (values.push(v), `$${values.length}`), dialect);
  return { sql: sql.replace(/SELECT position, .*? FROM/g, 'SELECT … FROM'), values };
};

describe('the SQL of the log read', () => {
  it('reads the primary key range without a filter, both ways', () => {
    expect(build({ direction: 'forward', afterPosition: 5, limit: 10 })).toEqual({
      sql: 'SELECT … FROM events WHERE tenant_id = $1 AND position > $2 ORDER BY position ASC LIMIT $3',
      values: ['t1', 5, 10],
    });
    expect(build({ direction: 'backward', limit: 10 }).values).toEqual(['t1', Number.MAX_SAFE_INTEGER, 10]);
    expect(build({ direction: 'backward', limit: 10 }).sql).toContain('position < $2 ORDER BY position DESC');
  });

  it('drives one filter value through its index (named on SQLite), the other list filtering', () => {
    const { sql, values } = build(
      { direction: 'forward', afterPosition: 0, limit: 3, eventTypes: ['E'], aggregateTypes: ['a', 'b'] },
      'sqlite',
    );
    expect(sql).toBe(
      'SELECT … FROM events INDEXED BY events_by_event_type WHERE tenant_id = $1 AND event_type = $2 AND position > $3 ' +
        'AND aggregate_type IN ($4, $5) ORDER BY position ASC LIMIT $6',
    );
    expect(values).toEqual(['t1', 'E', 0, 'a', 'b', 3]);
    expect(build({ direction: 'forward', afterPosition: 0, limit: 3, aggregateTypes: ['a'] }).sql).toContain(
      'FROM events WHERE tenant_id = $1 AND aggregate_type = $2',
    );
  });

  it('reads several values as one limited range each, merged by position under the same limit', () => {
    const { sql } = build({ direction: 'backward', beforePosition: 9, limit: 4, aggregateTypes: ['a', 'b'] });
    expect(sql).toBe(
      'SELECT * FROM (SELECT * FROM (SELECT … FROM events WHERE tenant_id = $1 AND aggregate_type = $2 AND position < $3 ORDER BY position DESC LIMIT $4) AS r0 ' +
        'UNION ALL SELECT * FROM (SELECT … FROM events WHERE tenant_id = $5 AND aggregate_type = $6 AND position < $7 ORDER BY position DESC LIMIT $8) AS r1) ' +
        'AS u ORDER BY position DESC LIMIT $9',
    );
  });
});

describe('the SQL of a log read by DCB query', () => {
  it('drives an item with tags from event_tags on its first tag, probing the others, positions then rows by key', () => {
    const { sql, values } = build({ direction: 'forward', afterPosition: 4, limit: 10, query: { items: [{ tags: ['a', 'b'] }] } });
    expect(sql).toBe(
      'SELECT e.position, e.event_id, e.aggregate_id, e.aggregate_type, e.event_type, e.version, e.created_at, e.data, e.metadata, ' +
        'e.correlation_id, e.causation_id, e.trace_parent, e.trace_state, e.erased_at, e.tags FROM (' +
        'SELECT g.position AS position FROM event_tags g WHERE g.tenant_id = $1 AND g.tag = $2 AND g.position > $3 ' +
        'AND EXISTS (SELECT 1 FROM event_tags o WHERE o.tenant_id = g.tenant_id AND o.tag = $4 AND o.position = g.position OFFSET 0) ' +
        'ORDER BY g.position ASC LIMIT $5) AS p CROSS JOIN events e WHERE e.tenant_id = $6 AND e.position = p.position ORDER BY e.position ASC',
    );
    expect(values).toEqual(['t1', 'a', 4, 'b', 10, 't1']);
  });

  it('joins the event row only to check types, and reads an item of types one index range per type', () => {
    const { sql, values } = build(
      {
        direction: 'backward',
        beforePosition: 50,
        limit: 5,
        aggregateTypes: ['course'],
        query: { items: [{ tags: ['t'], types: ['X'] }, { types: ['A', 'B'] }] },
      },
      'sqlite',
    );
    expect(sql).toContain(
      'SELECT g.position AS position FROM event_tags g CROSS JOIN events e WHERE g.tenant_id = $1 AND g.tag = $2 AND g.position < $3 ' +
        'AND e.tenant_id = g.tenant_id AND e.position = g.position AND e.event_type IN ($4) AND e.aggregate_type IN ($5) ORDER BY g.position DESC LIMIT $6',
    );
    expect(sql).toContain(
      'SELECT position FROM events INDEXED BY events_by_event_type WHERE tenant_id = $7 AND event_type = $8 AND position < $9 ' +
        'AND erased_at IS NULL AND aggregate_type IN ($10) ORDER BY position DESC LIMIT $11',
    );
    expect(sql).toContain(' UNION SELECT * FROM (');
    expect(sql).toContain('ORDER BY position DESC LIMIT $17) AS p CROSS JOIN events e WHERE e.tenant_id = $18');
    expect(values).toEqual(['t1', 't', 50, 'X', 'course', 5, 't1', 'A', 50, 'course', 5, 't1', 'B', 50, 'course', 5, 5, 't1']);
  });

  it('keeps an item within the event type filter: no common type, no range; none left, no row', () => {
    const q = { direction: 'forward' as const, afterPosition: 0, limit: 5, eventTypes: ['A'] };
    expect(build({ ...q, query: { items: [{ types: ['B'] }, { types: ['A', 'C'] }] } }).values).toEqual(['t1', 'A', 0, 5, 't1']);
    expect(build({ ...q, query: { items: [{ types: ['B'] }] } }).sql).toBe('SELECT … FROM events WHERE tenant_id = $1 AND 1 = 0');
    // A tag item without types takes the filter's types on its row.
    expect(build({ ...q, query: { items: [{ tags: ['x'] }] } }).sql).toContain('AND e.event_type IN ($4)');
  });

  it('reads a query with an item matching every event as the plain log, without erased events', () => {
    const { sql } = build({ direction: 'forward', afterPosition: 0, limit: 5, query: { items: [{ tags: ['x'] }, {}] } });
    expect(sql).toBe('SELECT … FROM events WHERE tenant_id = $1 AND position > $2 AND erased_at IS NULL ORDER BY position ASC LIMIT $3');
  });
});

describe('the SQL of the conditions’ hits', () => {
  it('answers one row per condition: the least position of its items’ first matches after `after`', () => {
    const values: unknown[] = [];
    const sql = conditionHitSql(
      [
        { index: 0, tenantId: 't1', query: { items: [{ tags: ['c'] }, { types: ['T'] }] }, after: 7 },
        { index: 3, tenantId: 't1', query: { items: [{}] }, after: 0 },
      ],
      (v) => (values.push(v), `$${values.length}`),
      'postgres',
    );
    expect(sql).toBe(
      'SELECT 0 AS r, (SELECT min(position) FROM (SELECT * FROM (SELECT g.position AS position FROM event_tags g WHERE g.tenant_id = $1 AND g.tag = $2 ' +
        'AND g.position > $3 ORDER BY g.position ASC LIMIT $4) AS b0 UNION ALL SELECT * FROM (SELECT position FROM events WHERE tenant_id = $5 ' +
        'AND event_type = $6 AND position > $7 AND erased_at IS NULL ORDER BY position ASC LIMIT $8) AS b1) AS u) AS p UNION ALL ' +
        'SELECT 3 AS r, (SELECT min(position) FROM (SELECT * FROM (SELECT position FROM events WHERE tenant_id = $9 AND position > $10 ' +
        'AND erased_at IS NULL ORDER BY position ASC LIMIT $11) AS b0) AS u) AS p',
    );
    expect(values).toEqual(['t1', 'c', 7, 1, 't1', 'T', 7, 1, 't1', 0, 1]);
  });
});
