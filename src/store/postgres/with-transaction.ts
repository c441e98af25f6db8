import { Pool, PoolClient } from 'pg';

/** BEGIN … COMMIT on one pooled client; ROLLBACK on any error; the client always goes back. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client whose server goes away emits 'error' as well as failing its query;
  // unheard, that event would end the process. The failed query is what the caller handles.
  const ignore = () => undefined;
  client.on('error', ignore);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.off('error', ignore);
    client.release();
  }
}
