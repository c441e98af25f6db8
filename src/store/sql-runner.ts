/**
 * The little SQL both adapters share for repositories whose SQL is the same on SQLite and
 * PostgreSQL: `?` placeholders (converted to $n for PostgreSQL), and atomic statement batches.
 */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

export interface SqlRunner {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  /** Rows changed. */
  run(sql: string, params: unknown[]): Promise<number>;
  /** All or nothing. */
  batch(statements: SqlStatement[]): Promise<void>;
}

/** `?` → `$1, $2, …` (the shared SQL never holds a literal question mark). */
export function toPgPlaceholders(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}
