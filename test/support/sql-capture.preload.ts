/* eslint-disable @typescript-eslint/no-require-imports */
import * as fs from 'node:fs';

/**
 * Loaded with `node --require` (NODE_OPTIONS) into a service child process started by a test, and
 * so into its worker threads too (the SQLite append worker): records the text of every SQL
 * statement the process hands to better-sqlite3 (prepare, exec) or to pg (Client.query, which
 * Pool.query also goes through), one JSON string per line, in SQL_CAPTURE_FILE. Each distinct text
 * is written once per thread. test/store/tenant-scoped-sql.int-spec.ts reads the file.
 */
const file = process.env.SQL_CAPTURE_FILE;
if (file) {
  const seen = new Set<string>();
  const record = (sql: unknown): void => {
    if (typeof sql !== 'string' || seen.has(sql)) return;
    seen.add(sql);
    fs.appendFileSync(file, `${JSON.stringify(sql)}\n`);
  };

  const Database = require('better-sqlite3');
  for (const method of ['prepare', 'exec'] as const) {
    const original = Database.prototype[method];
    Database.prototype[method] = function (this: unknown, sql: unknown, ...rest: unknown[]) {
      record(sql);
      return original.call(this, sql, ...rest);
    };
  }

  const pg = require('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, config: any, ...rest: unknown[]) {
    record(typeof config === 'string' ? config : config?.text);
    return query.call(this, config, ...rest);
  };
}
