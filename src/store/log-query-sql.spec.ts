import { logQuerySql } from './log-query-sql';

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
