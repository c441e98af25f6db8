import type Database from 'better-sqlite3';

/** A connection's prepared statements by SQL text, prepared on first use (the SQLite runners and the writer's batch share it). */
export function statementCache(db: Database.Database): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
}
