import { Pool, PoolClient } from 'pg';
import { TransferSession, TransferSessions } from '../sql-tenant-transfer';
import { toPgPlaceholders } from '../sql-runner';

/** A pooled client held for one export (REPEATABLE READ snapshot) or one import (its one transaction). */
export class PostgresTransferSessions implements TransferSessions {
  constructor(private readonly pool: Pool) {}

  readSnapshot(): Promise<TransferSession> {
    return this.open('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  writeTransaction(): Promise<TransferSession> {
    return this.open('BEGIN');
  }

  private async open(begin: string): Promise<TransferSession> {
    const client: PoolClient = await this.pool.connect();
    const ignore = () => undefined; // see with-transaction.ts
    client.on('error', ignore);
    let open = false;
    try {
      await client.query(begin);
      open = true;
    } catch (e) {
      client.off('error', ignore);
      client.release(true);
      throw e;
    }
    return {
      all: async <T>(sql: string, params: unknown[]) => (await client.query(toPgPlaceholders(sql), params)).rows as T[],
      run: async (sql: string, params: unknown[]) => {
        await client.query(toPgPlaceholders(sql), params);
        if (sql === 'COMMIT') open = false;
      },
      release: async () => {
        if (open) await client.query('ROLLBACK').catch(() => undefined);
        client.off('error', ignore);
        client.release();
      },
      isConflict: (e: unknown) => (e as { code?: string })?.code === '23505',
      // Class 22 (data exception: a value of the wrong type) and 23 (integrity: NOT NULL, foreign key, check).
      isInvalidRow: (e: unknown) => /^2[23]/.test((e as { code?: string })?.code ?? ''),
    };
  }
}
