/**
 * The little SQL both adapters share for repositories whose SQL is the same on SQLite and
 * PostgreSQL: `?` placeholders (converted to $n for PostgreSQL), and atomic statement batches.
 * Every difference of the two engines that this SQL meets is listed, and absorbed, in sql-dialect.ts.
 */
export type SqlDialect = 'sqlite' | 'postgres';

export interface SqlStatement {
  sql: string;
  params: unknown[];
  /**
   * A guard: when this statement changes no row (or fewer than the number given), nothing of its
   * batch is kept and batch() answers false (an optimistic write that lost to another writer: a
   * lane's checkpoint, say; one of several versions routed together was dropped).
   */
  mustChange?: boolean | number;
}

/** Whether a statement's guard is met by the rows it changed. */
export function guardHolds(s: SqlStatement, changed: number): boolean {
  if (s.mustChange === undefined || s.mustChange === false) return true;
  return changed >= (s.mustChange === true ? 1 : s.mustChange);
}

export interface SqlRunner {
  /** Which engine runs the SQL: only sql-dialect.ts asks (the few statements that differ). */
  readonly dialect: SqlDialect;
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  /** Rows changed. */
  run(sql: string, params: unknown[]): Promise<number>;
  /** All or nothing: true when kept, false when a `mustChange` guard changed no row (then nothing is kept). */
  batch(statements: SqlStatement[]): Promise<boolean>;
}

/** `?` → `$1, $2, …` (the shared SQL never holds a literal question mark). */
export function toPgPlaceholders(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/** Thrown inside a batch's transaction to roll it back when a `mustChange` guard changed no row. */
export class GuardMissed extends Error {
  constructor() {
    super('guard changed no row');
  }
}
